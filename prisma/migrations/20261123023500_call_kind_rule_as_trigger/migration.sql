-- The rule of Call.kind moves from a CHECK constraint to a trigger: Prisma's schema engine (6.19, wasm)
-- crashes ("RuntimeError: unreachable") introspecting a database holding that CHECK, which broke
-- `npm run migration:new`. Same rule: a campaign's call has its campaign and lead; a test call has
-- neither, and records the number it dialed.
ALTER TABLE "Call" DROP CONSTRAINT "Call_kind_check";

CREATE FUNCTION call_kind_rule() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT ((NEW.kind = 'campaign' AND NEW."campaignId" IS NOT NULL AND NEW."leadId" IS NOT NULL)
       OR (NEW.kind = 'test' AND NEW."campaignId" IS NULL AND NEW."leadId" IS NULL AND NEW."toNumber" IS NOT NULL)) THEN
    RAISE EXCEPTION 'Call % breaks the rule of its kind %', NEW.id, NEW.kind USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER call_kind_rule BEFORE INSERT OR UPDATE OF kind, "campaignId", "leadId", "toNumber" ON "Call"
  FOR EACH ROW EXECUTE FUNCTION call_kind_rule();
