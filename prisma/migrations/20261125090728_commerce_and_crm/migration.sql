-- CreateTable
CREATE TABLE "CrmConnection" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "shopDomain" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deletedAt" TIMESTAMP(3),

    CONSTRAINT "CrmConnection_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CrmWebhookDelivery" (
    "id" UUID NOT NULL,
    "connectionId" UUID NOT NULL,
    "receivedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "status" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "eventId" TEXT,
    "processingError" TEXT,
    "shape" JSONB NOT NULL,
    "payload" JSONB,
    "processedAt" TIMESTAMP(3),

    CONSTRAINT "CrmWebhookDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CommerceOrder" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "connectionId" UUID NOT NULL,
    "externalOrderId" TEXT NOT NULL,
    "orderNumber" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "totalPrice" TEXT NOT NULL,
    "financialStatus" TEXT NOT NULL,
    "fulfillmentStatus" TEXT NOT NULL,
    "customerName" TEXT NOT NULL,
    "customerPhone" TEXT,
    "placedAt" TIMESTAMP(3) NOT NULL,
    "cancelledAt" TIMESTAMP(3),
    "attributedToService" BOOLEAN NOT NULL DEFAULT false,
    "attributedCampaignId" UUID,
    "attributionMethod" TEXT,
    "utmSource" TEXT,
    "utmCampaign" TEXT,
    "storeUpdatedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CommerceOrder_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OrderNotificationRule" (
    "id" UUID NOT NULL,
    "connectionId" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "trigger" TEXT NOT NULL DEFAULT 'ORDER_PLACED',
    "templateId" UUID NOT NULL,
    "presetId" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL,
    "delayMinutes" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OrderNotificationRule_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "CrmConnection_workspaceId_idx" ON "CrmConnection"("workspaceId");

-- CreateIndex
CREATE INDEX "CrmConnection_kind_shopDomain_idx" ON "CrmConnection"("kind", "shopDomain");

-- CreateIndex
CREATE INDEX "CrmWebhookDelivery_connectionId_receivedAt_idx" ON "CrmWebhookDelivery"("connectionId", "receivedAt");

-- CreateIndex
CREATE UNIQUE INDEX "CrmWebhookDelivery_connectionId_eventId_key" ON "CrmWebhookDelivery"("connectionId", "eventId");

-- CreateIndex
CREATE INDEX "CommerceOrder_workspaceId_placedAt_id_idx" ON "CommerceOrder"("workspaceId", "placedAt", "id");

-- CreateIndex
CREATE INDEX "CommerceOrder_workspaceId_customerPhone_idx" ON "CommerceOrder"("workspaceId", "customerPhone");

-- CreateIndex
CREATE UNIQUE INDEX "CommerceOrder_connectionId_externalOrderId_key" ON "CommerceOrder"("connectionId", "externalOrderId");

-- CreateIndex
CREATE INDEX "OrderNotificationRule_connectionId_position_idx" ON "OrderNotificationRule"("connectionId", "position");

