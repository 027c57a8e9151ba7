-- AlterTable
ALTER TABLE "WhatsAppMessage" ADD COLUMN     "ambiguousAt" TIMESTAMP(3),
ADD COLUMN     "handOver" TEXT,
ADD COLUMN     "sendAttempts" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "WhatsAppSender" ADD COLUMN     "backoffUntil" TIMESTAMP(3),
ADD COLUMN     "connectionId" UUID;

-- CreateTable
CREATE TABLE "WhatsAppConnection" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "phoneNumberId" TEXT NOT NULL,
    "businessAccountId" TEXT NOT NULL,
    "displayPhoneNumber" TEXT NOT NULL,
    "baseUrl" TEXT,
    "secretKeyId" TEXT,
    "secretNonce" TEXT,
    "secretCiphertext" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "rotatedAt" TIMESTAMP(3),
    "deletedAt" TIMESTAMP(3),

    CONSTRAINT "WhatsAppConnection_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "WhatsAppConnection_workspaceId_idx" ON "WhatsAppConnection"("workspaceId");

-- AddForeignKey
ALTER TABLE "WhatsAppSender" ADD CONSTRAINT "WhatsAppSender_connectionId_fkey" FOREIGN KEY ("connectionId") REFERENCES "WhatsAppConnection"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WhatsAppConnection" ADD CONSTRAINT "WhatsAppConnection_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

