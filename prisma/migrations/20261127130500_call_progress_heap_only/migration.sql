-- Written by hand: schema.prisma needs no change for it. `prisma migrate deploy` applies it once.
--
-- A carrier's progress events (ringing, in-progress) change only the call's carrier columns ("carrierStatus",
-- "answeredBy", "providerCallId", "lastEventAt"), which no live sheet shows (lib/sheets/rows.ts). Until now the
-- trigger stamped "updatedAt" at every update, and "updatedAt" is in the index Call(campaignId, updatedAt), so no
-- update of a call could be heap-only (HOT): every event wrote an entry into each of the call's eight indexes
-- (bench/intake.ts (b), docs/benchmarks.md#intake-npm-run-benchintake). The call's "updatedAt" now moves when
-- anything else changes (its status, outcome, end, intelligence, any column added later), so the live sheet's
-- cursor still finds every change it shows, and a progress event touches no index (providerCallId unchanged), its
-- new row version kept on the same page when there is room.
CREATE FUNCTION "call_set_updated_at"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  unchanged "Call";
BEGIN
  IF TG_OP = 'UPDATE' THEN
    -- The new row with the carrier's progress columns put back: equal to the old one, nothing a sheet shows moved.
    unchanged := NEW;
    unchanged."carrierStatus" := OLD."carrierStatus";
    unchanged."answeredBy" := OLD."answeredBy";
    unchanged."providerCallId" := OLD."providerCallId";
    unchanged."lastEventAt" := OLD."lastEventAt";
    unchanged."updatedAt" := OLD."updatedAt";
    IF unchanged IS NOT DISTINCT FROM OLD THEN
      NEW."updatedAt" := OLD."updatedAt";
      RETURN NEW;
    END IF;
  END IF;
  NEW."updatedAt" := clock_timestamp() AT TIME ZONE 'UTC';
  RETURN NEW;
END;
$$;

DROP TRIGGER "Call_set_updatedAt" ON "Call";
CREATE TRIGGER "Call_set_updatedAt" BEFORE INSERT OR UPDATE ON "Call"
  FOR EACH ROW EXECUTE FUNCTION "call_set_updated_at"();

-- Room on each page for a call's next row versions (queued, ringing, in-progress, ended, its intelligence): a
-- heap-only update needs its new version on the same page. Applies to pages filled from now on.
ALTER TABLE "Call" SET (fillfactor = 80);
