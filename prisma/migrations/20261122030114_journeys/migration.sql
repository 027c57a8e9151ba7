-- CreateEnum
CREATE TYPE "WorkflowStatus" AS ENUM ('DRAFT', 'PUBLISHED');

-- CreateEnum
CREATE TYPE "JourneyRunStatus" AS ENUM ('running', 'completed', 'failed', 'cancelled', 'needs_recovery');

-- DropIndex
DROP INDEX "Call_leadId_attempt_key";

-- AlterTable
ALTER TABLE "Campaign" ADD COLUMN     "maxLiveRuns" INTEGER NOT NULL DEFAULT 1000,
ADD COLUMN     "workflowId" UUID;

-- CreateTable
CREATE TABLE "Workflow" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "status" "WorkflowStatus" NOT NULL DEFAULT 'DRAFT',
    "revision" INTEGER NOT NULL DEFAULT 1,
    "definition" JSONB NOT NULL,
    "publishedRevision" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Workflow_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WorkflowRevision" (
    "workflowId" UUID NOT NULL,
    "revision" INTEGER NOT NULL,
    "definition" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WorkflowRevision_pkey" PRIMARY KEY ("workflowId","revision")
);

-- CreateTable
CREATE TABLE "JourneyRun" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "workflowId" UUID NOT NULL,
    "revision" INTEGER NOT NULL,
    "campaignId" UUID,
    "leadId" UUID,
    "temporalWorkflowId" TEXT NOT NULL,
    "status" "JourneyRunStatus" NOT NULL DEFAULT 'running',
    "trigger" JSONB NOT NULL,
    "currentNodeId" TEXT,
    "variables" JSONB,
    "recovery" JSONB,
    "startedBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3),

    CONSTRAINT "JourneyRun_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "JourneyDecision" (
    "id" UUID NOT NULL,
    "runId" UUID NOT NULL,
    "nodeId" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "output" JSONB,
    "note" TEXT,
    "decidedBy" TEXT NOT NULL,
    "via" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "JourneyDecision_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SimulatedMessage" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "messageKey" TEXT NOT NULL,
    "to" TEXT NOT NULL,
    "templateName" TEXT NOT NULL,
    "language" TEXT NOT NULL,
    "parameters" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SimulatedMessage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Workflow_workspaceId_idx" ON "Workflow"("workspaceId");

-- CreateIndex
CREATE UNIQUE INDEX "JourneyRun_leadId_key" ON "JourneyRun"("leadId");

-- CreateIndex
CREATE UNIQUE INDEX "JourneyRun_temporalWorkflowId_key" ON "JourneyRun"("temporalWorkflowId");

-- CreateIndex
CREATE INDEX "JourneyRun_workflowId_status_createdAt_idx" ON "JourneyRun"("workflowId", "status", "createdAt");

-- CreateIndex
CREATE INDEX "JourneyRun_campaignId_status_idx" ON "JourneyRun"("campaignId", "status");

-- CreateIndex
CREATE INDEX "JourneyDecision_runId_createdAt_idx" ON "JourneyDecision"("runId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "SimulatedMessage_messageKey_key" ON "SimulatedMessage"("messageKey");

-- CreateIndex
CREATE INDEX "Call_leadId_idx" ON "Call"("leadId");

-- AddForeignKey
ALTER TABLE "Workflow" ADD CONSTRAINT "Workflow_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WorkflowRevision" ADD CONSTRAINT "WorkflowRevision_workflowId_fkey" FOREIGN KEY ("workflowId") REFERENCES "Workflow"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "JourneyRun" ADD CONSTRAINT "JourneyRun_workflowId_fkey" FOREIGN KEY ("workflowId") REFERENCES "Workflow"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "JourneyDecision" ADD CONSTRAINT "JourneyDecision_runId_fkey" FOREIGN KEY ("runId") REFERENCES "JourneyRun"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

