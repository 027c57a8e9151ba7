-- AlterTable
ALTER TABLE "Lead" ADD COLUMN     "nextAttemptAt" TIMESTAMP(3),
ADD COLUMN     "waitingFor" TEXT;

-- CreateTable
CREATE TABLE "LineQueue" (
    "seq" BIGSERIAL NOT NULL,
    "campaignId" UUID NOT NULL,
    "leadId" UUID NOT NULL,
    "attemptId" TEXT NOT NULL,
    "workflowId" TEXT NOT NULL,
    "byPush" BOOLEAN NOT NULL DEFAULT false,
    "queuedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "grantedAt" TIMESTAMP(3),
    "wokenAt" TIMESTAMP(3),

    CONSTRAINT "LineQueue_pkey" PRIMARY KEY ("seq")
);

-- CreateIndex
CREATE UNIQUE INDEX "LineQueue_attemptId_key" ON "LineQueue"("attemptId");

-- CreateIndex
CREATE INDEX "LineQueue_campaignId_seq_idx" ON "LineQueue"("campaignId", "seq");

-- CreateIndex
CREATE INDEX "LineQueue_leadId_idx" ON "LineQueue"("leadId");

-- CreateIndex
CREATE INDEX "Lead_campaignId_waitingFor_idx" ON "Lead"("campaignId", "waitingFor");


-- Written by hand (scripts/new-migration.ts HAND_WRITTEN_INDEXES): the lines handed out and not yet used, which
-- the lead dispatcher's sweep wakes again. Only granted entries (at most a campaign's cap) are in it, so its
-- size follows the lines, not the queue.
CREATE INDEX "LineQueue_granted_idx" ON "LineQueue" ("grantedAt") WHERE "grantedAt" IS NOT NULL;
