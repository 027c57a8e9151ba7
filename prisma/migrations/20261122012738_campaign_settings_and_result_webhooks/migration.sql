-- AlterTable
ALTER TABLE "Call" ADD COLUMN     "campaignId" UUID NOT NULL;

-- AlterTable
ALTER TABLE "Campaign" ADD COLUMN     "agentId" TEXT,
ADD COLUMN     "callerNumbers" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "maxConcurrentCalls" INTEGER NOT NULL DEFAULT 10;

-- CreateTable
CREATE TABLE "ResultWebhookEndpoint" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "description" TEXT,
    "secret" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deletedAt" TIMESTAMP(3),

    CONSTRAINT "ResultWebhookEndpoint_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ResultWebhookDelivery" (
    "id" TEXT NOT NULL,
    "workspaceId" UUID NOT NULL,
    "endpointId" UUID NOT NULL,
    "eventKey" TEXT NOT NULL,
    "eventType" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastStatusCode" INTEGER,
    "lastError" TEXT,
    "nextAttemptAt" TIMESTAMP(3),
    "deliveredAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ResultWebhookDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ResultWebhookEndpoint_workspaceId_idx" ON "ResultWebhookEndpoint"("workspaceId");

-- CreateIndex
CREATE INDEX "ResultWebhookDelivery_workspaceId_createdAt_idx" ON "ResultWebhookDelivery"("workspaceId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "ResultWebhookDelivery_endpointId_eventKey_key" ON "ResultWebhookDelivery"("endpointId", "eventKey");

-- CreateIndex
CREATE INDEX "Call_campaignId_status_idx" ON "Call"("campaignId", "status");

-- AddForeignKey
ALTER TABLE "ResultWebhookDelivery" ADD CONSTRAINT "ResultWebhookDelivery_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "ResultWebhookEndpoint"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

