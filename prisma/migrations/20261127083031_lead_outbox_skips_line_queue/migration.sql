-- DropIndex
DROP INDEX "Lead_workflowStartedAt_createdAt_idx";


-- Written by hand (scripts/new-migration.ts HAND_WRITTEN_INDEXES): the lead outbox's sweep and gauges
-- (lib/temporal/lead-dispatch.ts UNDISPATCHED_LEAD_SQL, the same predicate). Leads waiting in a line queue for their
-- first line are left out: their workflows start with their line, so the index, and each sweep, follow the leads to
-- start, not the leads waiting.
CREATE INDEX "Lead_undispatched_idx" ON "Lead" ("createdAt")
  WHERE "workflowStartedAt" IS NULL AND "waitingFor" IS DISTINCT FROM 'line' AND "waitingFor" IS DISTINCT FROM 'campaign';
