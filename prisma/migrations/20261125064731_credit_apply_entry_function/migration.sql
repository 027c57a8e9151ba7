-- One ledger entry and its move of the balance in one call (lib/credits/apply-entry.ts), so that a debit is
-- one autocommitted statement: no round trip to the client while the Workspace row is locked, and the entry
-- written once, with its balance after (bench/credits.ts measured the two-statement transaction at a third
-- of a bare UPDATE of the balance). In one statement, atomic:
-- 1. a key used before answers its entry (duplicate) and the balance is not touched;
-- 2. one conditional UPDATE moves the balance (never below zero: "creditBalance" >= required, evaluated on
--    the newest row under its lock); not covered: SQLSTATE CR402 with the balance in the message; a
--    workspace that is gone: CR404;
-- 3. the entry is inserted with its balance after, ON CONFLICT ("workspaceId", "idempotencyKey") DO NOTHING:
--    a concurrent call with the same key that committed first makes it conflict, and CR409 rolls the whole
--    statement back, the balance move with it (the caller asks again and gets the first entry).
CREATE FUNCTION credit_apply_entry(
  p_workspace uuid, p_kind "CreditKind", p_amount numeric, p_required numeric, p_status "CreditEntryStatus",
  p_held_for "CreditKind", p_hold_id uuid, p_reference_type text, p_reference_id text, p_actor "CreditActor",
  p_actor_id text, p_key text
) RETURNS TABLE (entry "CreditLedgerEntry", duplicate boolean) LANGUAGE plpgsql AS $$
DECLARE
  v_entry "CreditLedgerEntry";
  v_balance numeric;
BEGIN
  SELECT e.* INTO v_entry FROM "CreditLedgerEntry" e WHERE e."workspaceId" = p_workspace AND e."idempotencyKey" = p_key;
  IF FOUND THEN
    RETURN QUERY SELECT v_entry, true;
    RETURN;
  END IF;
  UPDATE "Workspace" SET "creditBalance" = "creditBalance" + p_amount
    WHERE id = p_workspace AND "deletedAt" IS NULL AND "creditBalance" >= p_required
    RETURNING "creditBalance" INTO v_balance;
  IF v_balance IS NULL THEN
    SELECT "creditBalance" INTO v_balance FROM "Workspace" WHERE id = p_workspace AND "deletedAt" IS NULL;
    IF v_balance IS NULL THEN
      RAISE EXCEPTION 'credit_workspace_not_found %', p_workspace USING ERRCODE = 'CR404';
    END IF;
    RAISE EXCEPTION 'insufficient_credits balance=%', v_balance USING ERRCODE = 'CR402';
  END IF;
  INSERT INTO "CreditLedgerEntry" AS e (id, "workspaceId", kind, amount, "balanceAfter", status, "heldFor", "holdId",
    "referenceType", "referenceId", actor, "actorId", "idempotencyKey")
  VALUES (gen_random_uuid(), p_workspace, p_kind, p_amount, v_balance, p_status, p_held_for, p_hold_id,
    p_reference_type, p_reference_id, p_actor, p_actor_id, p_key)
  ON CONFLICT ("workspaceId", "idempotencyKey") DO NOTHING
  RETURNING e.* INTO v_entry;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'credit_key_raced %', p_key USING ERRCODE = 'CR409';
  END IF;
  RETURN QUERY SELECT v_entry, false;
END
$$;
