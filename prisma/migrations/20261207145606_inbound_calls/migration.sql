-- AlterTable
ALTER TABLE "Call" ADD COLUMN     "direction" TEXT NOT NULL DEFAULT 'outbound';

-- AlterTable
ALTER TABLE "PhoneNumber" ADD COLUMN     "inboundCarrierRef" TEXT,
ADD COLUMN     "inboundRoutedAt" TIMESTAMP(3),
ADD COLUMN     "inboundRoutedConnectionId" UUID;

-- CreateIndex
CREATE INDEX "Lead_workspaceId_phone_idx" ON "Lead"("workspaceId", "phone");


-- The rule of Call.kind gains kind inbound (docs/features/carriers/inbound.md): a call in from a number no lead of the
-- workspace has, with neither campaign nor lead, inbound, and the caller's number recorded.
CREATE OR REPLACE FUNCTION call_kind_rule() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT ((NEW.kind = 'campaign' AND NEW."campaignId" IS NOT NULL AND NEW."leadId" IS NOT NULL)
       OR (NEW.kind = 'test' AND NEW."campaignId" IS NULL AND NEW."leadId" IS NULL AND NEW."toNumber" IS NOT NULL)
       OR (NEW.kind = 'inbound' AND NEW."campaignId" IS NULL AND NEW."leadId" IS NULL AND NEW.direction = 'inbound'
           AND NEW."fromNumber" IS NOT NULL)) THEN
    RAISE EXCEPTION 'Call % breaks the rule of its kind %', NEW.id, NEW.kind USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;

DROP TRIGGER call_kind_rule ON "Call";
CREATE TRIGGER call_kind_rule BEFORE INSERT OR UPDATE OF kind, direction, "campaignId", "leadId", "toNumber", "fromNumber"
  ON "Call" FOR EACH ROW EXECUTE FUNCTION call_kind_rule();
