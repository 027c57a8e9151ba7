-- Recordings of answered calls (docs/features/recordings.md): the workspace's switch and retention, off and none by
-- default, and each call's recording reference (the audio stays at the carrier).
-- AlterTable
ALTER TABLE "ComplianceSettings" ADD COLUMN     "recordingEnabled" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "recordingRetentionDays" INTEGER;

-- CreateTable
CREATE TABLE "CallRecording" (
    "callId" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "carrierConnectionId" UUID NOT NULL,
    "carrierRecordingId" TEXT,
    "status" TEXT NOT NULL,
    "durationSec" INTEGER,
    "channels" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completedAt" TIMESTAMP(3),
    "deletedAt" TIMESTAMP(3),
    "deletedAtCarrier" BOOLEAN,

    CONSTRAINT "CallRecording_pkey" PRIMARY KEY ("callId")
);

-- CreateIndex
CREATE INDEX "CallRecording_status_completedAt_idx" ON "CallRecording"("status", "completedAt");

-- CreateIndex
CREATE UNIQUE INDEX "CallRecording_carrierRecordingId_key" ON "CallRecording"("carrierRecordingId");

-- AddForeignKey
ALTER TABLE "CallRecording" ADD CONSTRAINT "CallRecording_callId_fkey" FOREIGN KEY ("callId") REFERENCES "Call"("id") ON DELETE CASCADE ON UPDATE CASCADE;

