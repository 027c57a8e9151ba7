-- Written by hand: schema.prisma cannot state a partial index. `prisma migrate deploy` applies it once, and
-- `npm run migration:new` leaves these indexes out of the drops it generates (scripts/new-migration.ts
-- HAND_WRITTEN_INDEXES).
--
-- The worker's gauges (worker/product-metrics.ts) count the deliveries not done at every scrape: without these
-- they read the whole table, one row per finished lead and endpoint. Each index holds only the rows not done,
-- so its size follows the backlog, not the history. The CRM sweep (lib/crm/deliveries.ts) reads the second.
CREATE INDEX "ResultWebhookDelivery_retrying_idx" ON "ResultWebhookDelivery" ("createdAt")
  WHERE status = 'pending' AND attempts > 0;
CREATE INDEX "CrmWebhookDelivery_received_idx" ON "CrmWebhookDelivery" ("receivedAt")
  WHERE status = 'received';
