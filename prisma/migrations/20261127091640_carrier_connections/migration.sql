-- AlterTable
ALTER TABLE "PhoneNumber" ADD COLUMN     "carrierConnectionId" UUID;

-- CreateTable
CREATE TABLE "CarrierConnection" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "accountSid" TEXT,
    "apiKeySid" TEXT,
    "connectionRef" TEXT,
    "baseUrl" TEXT,
    "secretKeyId" TEXT,
    "secretNonce" TEXT,
    "secretCiphertext" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "rotatedAt" TIMESTAMP(3),
    "deletedAt" TIMESTAMP(3),

    CONSTRAINT "CarrierConnection_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "CarrierConnection_workspaceId_idx" ON "CarrierConnection"("workspaceId");

-- CreateIndex
CREATE UNIQUE INDEX "CarrierConnection_workspaceId_id_key" ON "CarrierConnection"("workspaceId", "id");

-- CreateIndex
CREATE INDEX "PhoneNumber_carrierConnectionId_idx" ON "PhoneNumber"("carrierConnectionId");

-- AddForeignKey
ALTER TABLE "PhoneNumber" ADD CONSTRAINT "PhoneNumber_workspaceId_carrierConnectionId_fkey" FOREIGN KEY ("workspaceId", "carrierConnectionId") REFERENCES "CarrierConnection"("workspaceId", "id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CarrierConnection" ADD CONSTRAINT "CarrierConnection_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

