-- AlterTable
ALTER TABLE "Call" ADD COLUMN     "agentId" UUID,
ADD COLUMN     "answeredBy" TEXT,
ADD COLUMN     "carrierStatus" TEXT,
ADD COLUMN     "fromNumber" TEXT,
ADD COLUMN     "hangupRequestedAt" TIMESTAMP(3),
ADD COLUMN     "intelligence" JSONB,
ADD COLUMN     "lastEventAt" TIMESTAMP(3),
ADD COLUMN     "transcript" JSONB,
ADD COLUMN     "workflowId" TEXT;

-- AlterTable
ALTER TABLE "Campaign" ADD COLUMN     "statusReason" JSONB;

-- CreateTable
CREATE TABLE "CallEvent" (
    "id" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "eventId" TEXT NOT NULL,
    "callId" UUID NOT NULL,
    "status" TEXT NOT NULL,
    "applied" BOOLEAN NOT NULL,
    "occurredAt" TIMESTAMP(3) NOT NULL,
    "receivedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "payload" JSONB NOT NULL,

    CONSTRAINT "CallEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CallTranslation" (
    "callId" UUID NOT NULL,
    "language" TEXT NOT NULL,
    "sourceLanguage" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "turns" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CallTranslation_pkey" PRIMARY KEY ("callId","language")
);

-- CreateTable
CREATE TABLE "CallIssue" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "callId" UUID NOT NULL,
    "category" TEXT NOT NULL,
    "note" TEXT NOT NULL DEFAULT '',
    "reportedByKeyId" UUID,
    "reportedByMemberId" UUID NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CallIssue_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "CallEvent_callId_receivedAt_idx" ON "CallEvent"("callId", "receivedAt");

-- CreateIndex
CREATE UNIQUE INDEX "CallEvent_provider_eventId_key" ON "CallEvent"("provider", "eventId");

-- CreateIndex
CREATE INDEX "CallIssue_callId_createdAt_idx" ON "CallIssue"("callId", "createdAt");

-- AddForeignKey
ALTER TABLE "CallEvent" ADD CONSTRAINT "CallEvent_callId_fkey" FOREIGN KEY ("callId") REFERENCES "Call"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CallTranslation" ADD CONSTRAINT "CallTranslation_callId_fkey" FOREIGN KEY ("callId") REFERENCES "Call"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CallIssue" ADD CONSTRAINT "CallIssue_callId_fkey" FOREIGN KEY ("callId") REFERENCES "Call"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

