-- Written by hand: schema.prisma cannot state a partial index. `prisma migrate deploy` applies it once, and
-- `npm run migration:new` leaves it out of the drops it generates (scripts/new-migration.ts HAND_WRITTEN_INDEXES).
--
-- The sweep of abandoned credit holds (lib/credits/abandoned-holds.ts ABANDONED_HOLDS_SQL) reads the pending holds
-- oldest first. A WhatsApp message's hold stays pending until its status comes, up to the platform's 30 days, and
-- the sweep leaves it alone until then: this index holds every other pending hold only (the operations in flight and
-- the abandoned ones), so a run reads what it settles, however many WhatsApp holds wait.
CREATE INDEX "CreditLedgerEntry_abandoned_idx" ON "CreditLedgerEntry" ("createdAt")
  WHERE status = 'pending' AND kind = 'hold' AND "referenceType" IS DISTINCT FROM 'whatsapp_message';
