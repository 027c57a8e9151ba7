-- AlterTable
ALTER TABLE "Call" ADD COLUMN     "carrierConnectionId" UUID;

-- CreateIndex
CREATE INDEX "Call_carrierConnectionId_idx" ON "Call"("carrierConnectionId");

-- AddForeignKey
ALTER TABLE "Call" ADD CONSTRAINT "Call_workspaceId_carrierConnectionId_fkey" FOREIGN KEY ("workspaceId", "carrierConnectionId") REFERENCES "CarrierConnection"("workspaceId", "id") ON DELETE RESTRICT ON UPDATE CASCADE;

