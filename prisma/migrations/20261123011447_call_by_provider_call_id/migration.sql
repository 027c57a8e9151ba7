-- CreateIndex
CREATE INDEX "Call_provider_providerCallId_idx" ON "Call"("provider", "providerCallId");

