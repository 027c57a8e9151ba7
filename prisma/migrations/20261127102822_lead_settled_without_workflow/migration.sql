-- AlterTable
ALTER TABLE "Lead" ADD COLUMN     "settledWithoutWorkflowAt" TIMESTAMP(3);


-- Written by hand (scripts/new-migration.ts HAND_WRITTEN_INDEXES): the lead outbox's partial index, recreated with
-- the predicate of lib/temporal/lead-dispatch.ts UNDISPATCHED_LEAD_SQL, which now also leaves out the leads settled
-- without a workflow (a stop's never-started queued leads): they are finished, and no workflow is to start for them.
DROP INDEX "Lead_undispatched_idx";
CREATE INDEX "Lead_undispatched_idx" ON "Lead" ("createdAt")
  WHERE "workflowStartedAt" IS NULL AND "settledWithoutWorkflowAt" IS NULL AND "waitingFor" IS DISTINCT FROM 'line' AND "waitingFor" IS DISTINCT FROM 'campaign';
