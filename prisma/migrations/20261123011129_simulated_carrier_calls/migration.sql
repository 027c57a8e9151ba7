-- AlterTable
ALTER TABLE "SimulatedProviderCall" ADD COLUMN     "agent" JSONB,
ADD COLUMN     "eventsDelivered" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "fromNumber" TEXT,
ADD COLUMN     "hangupAt" TIMESTAMP(3),
ADD COLUMN     "lead" JSONB,
ADD COLUMN     "statusCallbackUrl" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "SimulatedProviderCall_providerCallId_key" ON "SimulatedProviderCall"("providerCallId");

