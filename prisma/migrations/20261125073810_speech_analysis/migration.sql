-- CreateEnum
CREATE TYPE "SpeechCallStatus" AS ENUM ('queued', 'processing', 'completed', 'failed');

-- CreateTable
CREATE TABLE "SpeechTeam" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SpeechTeam_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SpeechRep" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT,
    "teamId" UUID,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SpeechRep_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SpeechCall" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "repId" UUID,
    "title" TEXT,
    "language" TEXT NOT NULL,
    "status" "SpeechCallStatus" NOT NULL DEFAULT 'queued',
    "mediaType" TEXT NOT NULL,
    "byteSize" INTEGER NOT NULL,
    "durationMs" INTEGER NOT NULL,
    "scorecard" JSONB NOT NULL,
    "transcript" JSONB,
    "score" JSONB,
    "totalScore" INTEGER,
    "engine" TEXT,
    "errorCode" TEXT,
    "errorMessage" TEXT,
    "workflowId" TEXT NOT NULL,
    "idempotencyKey" TEXT,
    "uploadedByKeyId" UUID,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completedAt" TIMESTAMP(3),

    CONSTRAINT "SpeechCall_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SpeechRecording" (
    "speechCallId" UUID NOT NULL,
    "audio" BYTEA NOT NULL,

    CONSTRAINT "SpeechRecording_pkey" PRIMARY KEY ("speechCallId")
);

-- CreateTable
CREATE TABLE "SpeechScorecard" (
    "workspaceId" UUID NOT NULL,
    "scorecard" JSONB NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SpeechScorecard_pkey" PRIMARY KEY ("workspaceId")
);

-- CreateIndex
CREATE UNIQUE INDEX "SpeechTeam_workspaceId_name_key" ON "SpeechTeam"("workspaceId", "name");

-- CreateIndex
CREATE INDEX "SpeechRep_workspaceId_createdAt_idx" ON "SpeechRep"("workspaceId", "createdAt");

-- CreateIndex
CREATE INDEX "SpeechRep_teamId_idx" ON "SpeechRep"("teamId");

-- CreateIndex
CREATE INDEX "SpeechCall_workspaceId_createdAt_id_idx" ON "SpeechCall"("workspaceId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "SpeechCall_repId_idx" ON "SpeechCall"("repId");

-- CreateIndex
CREATE UNIQUE INDEX "SpeechCall_workspaceId_idempotencyKey_key" ON "SpeechCall"("workspaceId", "idempotencyKey");

-- AddForeignKey
ALTER TABLE "SpeechRep" ADD CONSTRAINT "SpeechRep_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "SpeechTeam"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SpeechCall" ADD CONSTRAINT "SpeechCall_repId_fkey" FOREIGN KEY ("repId") REFERENCES "SpeechRep"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SpeechRecording" ADD CONSTRAINT "SpeechRecording_speechCallId_fkey" FOREIGN KEY ("speechCallId") REFERENCES "SpeechCall"("id") ON DELETE CASCADE ON UPDATE CASCADE;

