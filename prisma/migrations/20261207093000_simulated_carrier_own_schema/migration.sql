-- The simulated carrier (simulators/simulated-carrier/) keeps its record in a schema of its own, simulated_carrier,
-- which it also makes at start (simulators/simulated-carrier/call-store.ts, the same table): its table leaves the
-- product's schema. Its calls are moved, not dropped: a call still delivering its events goes on after the upgrade.
-- Timestamps were UTC without a zone (Prisma's); the carrier's own columns are timestamptz.

-- The carrier's start takes the same lock (a transaction's) while it makes the table.
SELECT pg_advisory_lock(hashtext('simulated_carrier'));

CREATE SCHEMA IF NOT EXISTS simulated_carrier;

CREATE TABLE IF NOT EXISTS simulated_carrier.calls (
  "attemptId" text PRIMARY KEY,
  "providerCallId" text NOT NULL UNIQUE,
  "to" text NOT NULL,
  outcome text NOT NULL,
  "durationMs" integer NOT NULL,
  "createdAt" timestamptz NOT NULL DEFAULT now(),
  "statusCallbackUrl" text,
  "fromNumber" text,
  agent jsonb,
  lead jsonb,
  "eventsDelivered" integer NOT NULL DEFAULT 0,
  "statusCallbackEvents" jsonb,
  "hangupAt" timestamptz
);

INSERT INTO simulated_carrier.calls ("attemptId", "providerCallId", "to", outcome, "durationMs", "createdAt",
                                     "statusCallbackUrl", "fromNumber", agent, lead, "eventsDelivered",
                                     "statusCallbackEvents", "hangupAt")
SELECT "attemptId", "providerCallId", "to", outcome, "durationMs", "createdAt" AT TIME ZONE 'UTC',
       "statusCallbackUrl", "fromNumber", agent, lead, "eventsDelivered", "statusCallbackEvents",
       "hangupAt" AT TIME ZONE 'UTC'
  FROM "SimulatedProviderCall"
ON CONFLICT DO NOTHING;

-- DropTable
DROP TABLE "SimulatedProviderCall";

SELECT pg_advisory_unlock(hashtext('simulated_carrier'));
