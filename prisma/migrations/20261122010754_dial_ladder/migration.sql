-- AlterTable
ALTER TABLE "Call" ADD COLUMN     "attemptId" TEXT NOT NULL,
ADD COLUMN     "status" TEXT NOT NULL,
ADD COLUMN     "workspaceId" UUID NOT NULL,
ALTER COLUMN "providerCallId" DROP NOT NULL,
ALTER COLUMN "outcome" DROP NOT NULL,
ALTER COLUMN "durationMs" DROP NOT NULL,
ALTER COLUMN "endedAt" DROP NOT NULL;

-- AlterTable
ALTER TABLE "Campaign" ADD COLUMN     "callingWindow" JSONB,
ADD COLUMN     "dialLadder" JSONB;

-- CreateTable
CREATE TABLE "DoNotCall" (
    "workspaceId" UUID NOT NULL,
    "phone" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DoNotCall_pkey" PRIMARY KEY ("workspaceId","phone")
);

-- CreateTable
CREATE TABLE "SimulatedProviderCall" (
    "attemptId" TEXT NOT NULL,
    "providerCallId" TEXT NOT NULL,
    "to" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "durationMs" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SimulatedProviderCall_pkey" PRIMARY KEY ("attemptId")
);

-- CreateIndex
CREATE UNIQUE INDEX "Call_attemptId_key" ON "Call"("attemptId");

-- CreateIndex
CREATE INDEX "Call_workspaceId_startedAt_idx" ON "Call"("workspaceId", "startedAt");

