-- The credit ledger becomes append-only (README "Credits"): every change of a workspace's balance is one
-- entry with its kind, status, what it is for, who caused it and an idempotency key unique per workspace.
-- Existing rows were the operator's grants (reason 'operator_grant'): they become kind grant, actor
-- operator, status posted, keyed by their own id.

-- CreateEnum
CREATE TYPE "CreditKind" AS ENUM ('grant', 'refund', 'test_call', 'recording_analysis', 'whatsapp_message', 'hold', 'hold_release');

-- CreateEnum
CREATE TYPE "CreditEntryStatus" AS ENUM ('pending', 'posted', 'voided');

-- CreateEnum
CREATE TYPE "CreditActor" AS ENUM ('api_key', 'operator', 'system');

-- DropIndex
DROP INDEX "CreditLedgerEntry_workspaceId_createdAt_idx";

-- AlterTable: the new columns, filled for the rows there are, then required.
ALTER TABLE "CreditLedgerEntry"
ADD COLUMN     "actor" "CreditActor",
ADD COLUMN     "actorId" TEXT,
ADD COLUMN     "heldFor" "CreditKind",
ADD COLUMN     "holdId" UUID,
ADD COLUMN     "idempotencyKey" TEXT,
ADD COLUMN     "kind" "CreditKind",
ADD COLUMN     "referenceId" TEXT,
ADD COLUMN     "referenceType" TEXT,
ADD COLUMN     "settledAt" TIMESTAMP(3),
ADD COLUMN     "status" "CreditEntryStatus" NOT NULL DEFAULT 'posted',
ALTER COLUMN "balanceAfter" DROP NOT NULL;

UPDATE "CreditLedgerEntry"
SET "kind" = 'grant', "actor" = 'operator', "idempotencyKey" = 'migrated:' || id::text;

ALTER TABLE "CreditLedgerEntry"
ALTER COLUMN "actor" SET NOT NULL,
ALTER COLUMN "idempotencyKey" SET NOT NULL,
ALTER COLUMN "kind" SET NOT NULL,
DROP COLUMN "reason";

-- CreateIndex
CREATE INDEX "CreditLedgerEntry_workspaceId_createdAt_id_idx" ON "CreditLedgerEntry"("workspaceId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "CreditLedgerEntry_workspaceId_kind_createdAt_idx" ON "CreditLedgerEntry"("workspaceId", "kind", "createdAt");

-- CreateIndex
CREATE INDEX "CreditLedgerEntry_status_createdAt_idx" ON "CreditLedgerEntry"("status", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "CreditLedgerEntry_workspaceId_idempotencyKey_key" ON "CreditLedgerEntry"("workspaceId", "idempotencyKey");

-- Append-only: an entry is never deleted, and only two updates are allowed, each changing nothing else:
-- the balance after it, written once (null to a value) by the transaction that inserts it; and a hold's
-- status, pending to posted or voided once, with the time it was settled. A trigger, not a CHECK
-- constraint (Prisma's wasm schema engine crashes on CHECK constraints).
CREATE FUNCTION credit_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'CreditLedgerEntry % cannot be deleted: the ledger is append-only', OLD.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF (NEW.id, NEW."workspaceId", NEW.kind, NEW.amount, NEW."heldFor", NEW."holdId", NEW."referenceType",
      NEW."referenceId", NEW.actor, NEW."actorId", NEW."idempotencyKey", NEW."createdAt")
     IS DISTINCT FROM
     (OLD.id, OLD."workspaceId", OLD.kind, OLD.amount, OLD."heldFor", OLD."holdId", OLD."referenceType",
      OLD."referenceId", OLD.actor, OLD."actorId", OLD."idempotencyKey", OLD."createdAt")
     OR NOT (
       -- the balance after, written once
       (OLD."balanceAfter" IS NULL AND NEW."balanceAfter" IS NOT NULL
        AND NEW.status = OLD.status AND NEW."settledAt" IS NOT DISTINCT FROM OLD."settledAt")
       -- a hold settled, once
       OR (OLD.kind = 'hold' AND OLD.status = 'pending' AND NEW.status IN ('posted', 'voided')
        AND NEW."settledAt" IS NOT NULL AND NEW."balanceAfter" IS NOT DISTINCT FROM OLD."balanceAfter")
     ) THEN
    RAISE EXCEPTION 'CreditLedgerEntry % cannot be changed: the ledger is append-only', OLD.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER credit_ledger_append_only BEFORE UPDATE OR DELETE ON "CreditLedgerEntry"
  FOR EACH ROW EXECUTE FUNCTION credit_ledger_append_only();
