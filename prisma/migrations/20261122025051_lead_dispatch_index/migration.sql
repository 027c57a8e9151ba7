-- CreateIndex
CREATE INDEX "Lead_workflowStartedAt_createdAt_idx" ON "Lead"("workflowStartedAt", "createdAt");

