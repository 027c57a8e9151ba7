import { Gauge, type Registry } from 'prom-client';
import { NOW_UTC } from '../lib/sql-clock';
import type { Database } from '../lib/database';
import { readOncePerScrape } from '../lib/metrics/scrape-once';

interface Backlog {
  holdsOpen: number;
  oldestHoldAgeSeconds: number;
  resultWebhooksRetrying: number;
  crmDeliveriesWaiting: number;
}

/**
 * The gauges' one statement. Every count is answered from an index: (status, "createdAt") for the holds, the
 * partial indexes of migration 20261125183420_metrics_partial_indexes for the deliveries not done.
 */
export const WORKER_GAUGES_SQL = `SELECT
           (SELECT count(*) FROM "CreditLedgerEntry" WHERE status = 'pending') AS holds,
           (SELECT extract(epoch FROM (${NOW_UTC} - min("createdAt")))::float8 FROM "CreditLedgerEntry" WHERE status = 'pending') AS oldest,
           (SELECT count(*) FROM "ResultWebhookDelivery" WHERE status = 'pending' AND attempts > 0) AS webhooks,
           (SELECT count(*) FROM "CrmWebhookDelivery" WHERE status = 'received') AS crm`;

/**
 * The product's own gauges a worker serves (beside calls placed, lib/metrics/calls.ts), read at scrape
 * time in one statement over indexed columns: credit holds still pending and the age of the oldest
 * ("CreditLedgerEntry"(status, createdAt)); result webhook deliveries that failed at least once and will
 * be tried again; store deliveries received whose processing has not finished. They describe the whole
 * database, so every worker serves the same values: alert on max(), not sum() (docs/operations.md#metrics).
 */
export function registerWorkerGauges(registry: Registry, db: Pick<Database, '$queryRawUnsafe'>): void {
  const read = readOncePerScrape<Backlog>(() =>
    db
      .$queryRawUnsafe<Array<{ holds: bigint; oldest: number | null; webhooks: bigint; crm: bigint }>>(
        WORKER_GAUGES_SQL,
      )
      .then(([row]) => ({
        holdsOpen: Number(row!.holds),
        oldestHoldAgeSeconds: Number(row!.oldest ?? 0),
        resultWebhooksRetrying: Number(row!.webhooks),
        crmDeliveriesWaiting: Number(row!.crm),
      })),
  );
  new Gauge({
    name: 'workspace_credit_holds_open',
    help: 'Credit holds still pending (a call or analysis in progress, or one whose operation died).',
    registers: [registry],
    async collect() {
      this.set((await read()).holdsOpen);
    },
  });
  new Gauge({
    name: 'workspace_credit_holds_oldest_age_seconds',
    help: 'Age of the oldest pending credit hold (0 when none).',
    registers: [registry],
    async collect() {
      this.set((await read()).oldestHoldAgeSeconds);
    },
  });
  new Gauge({
    name: 'workspace_deliveries_retrying',
    help: 'Deliveries not done after a failed attempt: result webhooks pending a retry, store deliveries not yet processed.',
    labelNames: ['kind'] as const,
    registers: [registry],
    async collect() {
      const backlog = await read();
      this.set({ kind: 'result_webhook' }, backlog.resultWebhooksRetrying);
      this.set({ kind: 'crm_delivery' }, backlog.crmDeliveriesWaiting);
    },
  });
}
