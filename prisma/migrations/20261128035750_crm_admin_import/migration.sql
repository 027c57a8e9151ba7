-- AlterTable
ALTER TABLE "CrmConnection" ADD COLUMN     "adminBaseUrl" TEXT,
ADD COLUMN     "adminProvider" TEXT,
ADD COLUMN     "adminTokenSetAt" TIMESTAMP(3),
ADD COLUMN     "secretCiphertext" TEXT,
ADD COLUMN     "secretKeyId" TEXT,
ADD COLUMN     "secretNonce" TEXT;

-- CreateTable
CREATE TABLE "CrmImport" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "campaignId" UUID NOT NULL,
    "connectionId" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "cursor" TEXT,
    "pages" INTEGER NOT NULL DEFAULT 0,
    "customersRead" INTEGER NOT NULL DEFAULT 0,
    "imported" INTEGER NOT NULL DEFAULT 0,
    "skipped" JSONB NOT NULL DEFAULT '{}',
    "throttledWaits" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "CrmImport_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CrmImportedCustomer" (
    "campaignId" UUID NOT NULL,
    "customerId" TEXT NOT NULL,
    "importId" UUID NOT NULL,
    "phone" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CrmImportedCustomer_pkey" PRIMARY KEY ("campaignId","customerId")
);

-- CreateIndex
CREATE INDEX "CrmImport_campaignId_createdAt_idx" ON "CrmImport"("campaignId", "createdAt");

