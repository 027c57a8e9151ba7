-- AlterTable
ALTER TABLE "LiveSheet" ADD COLUMN     "connectionId" UUID;

-- CreateTable
CREATE TABLE "SheetConnection" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "serviceAccountEmail" TEXT NOT NULL,
    "baseUrl" TEXT,
    "secretKeyId" TEXT,
    "secretNonce" TEXT,
    "secretCiphertext" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "rotatedAt" TIMESTAMP(3),
    "deletedAt" TIMESTAMP(3),

    CONSTRAINT "SheetConnection_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SheetQuotaBucket" (
    "account" TEXT NOT NULL,
    "tokens" DOUBLE PRECISION NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "SheetQuotaBucket_pkey" PRIMARY KEY ("account")
);

-- CreateIndex
CREATE INDEX "SheetConnection_workspaceId_idx" ON "SheetConnection"("workspaceId");

-- CreateIndex
CREATE INDEX "LiveSheet_connectionId_idx" ON "LiveSheet"("connectionId");

-- AddForeignKey
ALTER TABLE "LiveSheet" ADD CONSTRAINT "LiveSheet_connectionId_fkey" FOREIGN KEY ("connectionId") REFERENCES "SheetConnection"("id") ON DELETE SET NULL ON UPDATE CASCADE;

