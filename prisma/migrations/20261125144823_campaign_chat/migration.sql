-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN     "chatMessageCap" INTEGER;

-- CreateTable
CREATE TABLE "CampaignChatMessage" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "campaignId" UUID NOT NULL,
    "role" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "apiKeyId" UUID,
    "provider" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CampaignChatMessage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "CampaignChatMessage_campaignId_createdAt_idx" ON "CampaignChatMessage"("campaignId", "createdAt");

