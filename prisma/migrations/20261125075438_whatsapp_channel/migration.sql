-- CreateEnum
CREATE TYPE "WhatsAppSenderStatus" AS ENUM ('CONNECTED', 'DISCONNECTED');

-- CreateEnum
CREATE TYPE "WhatsAppTemplateCategory" AS ENUM ('marketing', 'utility', 'authentication');

-- CreateEnum
CREATE TYPE "WhatsAppTemplateStatus" AS ENUM ('PENDING', 'APPROVED', 'REJECTED', 'PAUSED', 'DISABLED');

-- CreateEnum
CREATE TYPE "WhatsAppDirection" AS ENUM ('inbound', 'outbound');

-- CreateEnum
CREATE TYPE "WhatsAppMessageStatus" AS ENUM ('accepted', 'sent', 'delivered', 'read', 'failed', 'received');

-- CreateTable
CREATE TABLE "WhatsAppSender" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "e164" TEXT NOT NULL,
    "displayName" TEXT,
    "provider" TEXT NOT NULL,
    "phoneNumberId" TEXT NOT NULL,
    "businessAccountId" TEXT NOT NULL,
    "status" "WhatsAppSenderStatus" NOT NULL DEFAULT 'CONNECTED',
    "dailyRecipientLimit" INTEGER NOT NULL DEFAULT 1000,
    "messagesPerSecond" INTEGER NOT NULL DEFAULT 80,
    "nextSendAt" TIMESTAMP(3),
    "connectedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disconnectedAt" TIMESTAMP(3),

    CONSTRAINT "WhatsAppSender_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WhatsAppTemplate" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "language" TEXT NOT NULL,
    "category" "WhatsAppTemplateCategory" NOT NULL,
    "body" TEXT NOT NULL,
    "variableCount" INTEGER NOT NULL,
    "status" "WhatsAppTemplateStatus" NOT NULL DEFAULT 'PENDING',
    "rejectedReason" TEXT,
    "qualityRating" TEXT NOT NULL DEFAULT 'UNKNOWN',
    "provider" TEXT NOT NULL,
    "providerTemplateId" TEXT,
    "statusUpdatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WhatsAppTemplate_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WhatsAppConversation" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "senderId" UUID NOT NULL,
    "contactE164" TEXT NOT NULL,
    "contactName" TEXT,
    "lastInboundAt" TIMESTAMP(3),
    "lastMessageAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived" BOOLEAN NOT NULL DEFAULT false,
    "archivedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WhatsAppConversation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WhatsAppMessage" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "conversationId" UUID NOT NULL,
    "senderId" UUID NOT NULL,
    "direction" "WhatsAppDirection" NOT NULL,
    "type" TEXT NOT NULL,
    "templateId" UUID,
    "category" "WhatsAppTemplateCategory",
    "body" TEXT NOT NULL,
    "status" "WhatsAppMessageStatus" NOT NULL,
    "providerMessageId" TEXT,
    "errorCode" INTEGER,
    "errorTitle" TEXT,
    "idempotencyKey" TEXT,
    "campaignId" UUID,
    "leadId" UUID,
    "journeyRunId" UUID,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sentAt" TIMESTAMP(3),
    "deliveredAt" TIMESTAMP(3),
    "readAt" TIMESTAMP(3),
    "failedAt" TIMESTAMP(3),

    CONSTRAINT "WhatsAppMessage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WhatsAppWebhookEvent" (
    "provider" TEXT NOT NULL,
    "eventKey" TEXT NOT NULL,
    "receivedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WhatsAppWebhookEvent_pkey" PRIMARY KEY ("provider","eventKey")
);

-- CreateTable
CREATE TABLE "WhatsAppCampaignSettings" (
    "campaignId" UUID NOT NULL,
    "senderId" UUID NOT NULL,
    "templateId" UUID NOT NULL,
    "variables" JSONB NOT NULL,
    "sendingWindow" JSONB NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "WhatsAppCampaignSettings_pkey" PRIMARY KEY ("campaignId")
);

-- CreateTable
CREATE TABLE "SimulatedWhatsAppMessage" (
    "id" TEXT NOT NULL,
    "phoneNumberId" TEXT NOT NULL,
    "clientKey" TEXT NOT NULL,
    "to" TEXT NOT NULL,
    "direction" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "plan" JSONB NOT NULL,
    "webhookUrl" TEXT,
    "eventsDelivered" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SimulatedWhatsAppMessage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SimulatedWhatsAppTemplate" (
    "id" TEXT NOT NULL,
    "businessAccountId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "language" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "rejectedReason" TEXT,
    "qualityScore" TEXT NOT NULL DEFAULT 'UNKNOWN',
    "webhookUrl" TEXT,
    "eventsDelivered" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SimulatedWhatsAppTemplate_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "WhatsAppSender_provider_phoneNumberId_key" ON "WhatsAppSender"("provider", "phoneNumberId");

-- CreateIndex
CREATE UNIQUE INDEX "WhatsAppSender_workspaceId_e164_key" ON "WhatsAppSender"("workspaceId", "e164");

-- CreateIndex
CREATE UNIQUE INDEX "WhatsAppTemplate_workspaceId_name_language_key" ON "WhatsAppTemplate"("workspaceId", "name", "language");

-- CreateIndex
CREATE UNIQUE INDEX "WhatsAppTemplate_provider_providerTemplateId_key" ON "WhatsAppTemplate"("provider", "providerTemplateId");

-- CreateIndex
CREATE INDEX "WhatsAppConversation_workspaceId_lastMessageAt_idx" ON "WhatsAppConversation"("workspaceId", "lastMessageAt");

-- CreateIndex
CREATE UNIQUE INDEX "WhatsAppConversation_senderId_contactE164_key" ON "WhatsAppConversation"("senderId", "contactE164");

-- CreateIndex
CREATE INDEX "WhatsAppMessage_workspaceId_createdAt_id_idx" ON "WhatsAppMessage"("workspaceId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "WhatsAppMessage_conversationId_createdAt_idx" ON "WhatsAppMessage"("conversationId", "createdAt");

-- CreateIndex
CREATE INDEX "WhatsAppMessage_leadId_idx" ON "WhatsAppMessage"("leadId");

-- CreateIndex
CREATE UNIQUE INDEX "WhatsAppMessage_workspaceId_idempotencyKey_key" ON "WhatsAppMessage"("workspaceId", "idempotencyKey");

-- CreateIndex
CREATE UNIQUE INDEX "WhatsAppMessage_senderId_providerMessageId_key" ON "WhatsAppMessage"("senderId", "providerMessageId");

-- CreateIndex
CREATE UNIQUE INDEX "SimulatedWhatsAppMessage_clientKey_key" ON "SimulatedWhatsAppMessage"("clientKey");

-- CreateIndex
CREATE UNIQUE INDEX "SimulatedWhatsAppTemplate_businessAccountId_name_language_key" ON "SimulatedWhatsAppTemplate"("businessAccountId", "name", "language");

