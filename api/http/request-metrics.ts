import { Counter, Gauge, Histogram, register, type Registry } from 'prom-client';
import type { SqlPool } from '../../lib/sql-pool';
import { NOW_UTC } from '../../lib/sql-clock';
import { UNDISPATCHED_LEAD_SQL } from '../../lib/temporal/lead-dispatch';
import { readOncePerScrape } from '../../lib/metrics/scrape-once';

/** Requests answered, by route (its template, e.g. /campaigns/{id}), method and status. */
export const httpRequests = new Counter({
  name: 'workspace_http_requests_total',
  help: 'API requests answered, by route template, method and status.',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [register],
});

/** From the request's arrival to the last byte of its answer handed to the socket. */
export const httpRequestDuration = new Histogram({
  name: 'workspace_http_request_duration_seconds',
  help: 'API request latency, arrival to answer sent, by route template, method and status.',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [register],
});

/** 429 rate_limited answers: a workspace over its limit, or an address over the failed-authentication limit. */
export const rateLimitRefusals = new Counter({
  name: 'workspace_rate_limit_refusals_total',
  help: 'Requests refused with 429 rate_limited, by route template.',
  labelNames: ['route'] as const,
  registers: [register],
});

/**
 * The outbox gauges' statement, answered from the partial index "Lead_undispatched_idx". Leads waiting in a line
 * queue for their first line are not in the outbox (their workflows start with their line): the line queue's own
 * depth tells how many wait.
 */
export const LEAD_OUTBOX_METRICS_SQL = `SELECT count(*) AS backlog, extract(epoch FROM (${NOW_UTC} - min(l."createdAt"))) AS oldest_age_seconds
  FROM "Lead" l WHERE ${UNDISPATCHED_LEAD_SQL}`;

/**
 * The lead outbox (docs/features/leads.md, "Intake is a transactional outbox"): leads stored whose workflow has not
 * been started yet, and the age of the oldest. Read at scrape time by one indexed query (LEAD_OUTBOX_METRICS_SQL).
 */
export function registerLeadOutboxMetrics(registry: Registry, sql: SqlPool): void {
  const read = readOncePerScrape(() =>
    sql
      .query<{ backlog: string; oldest_age_seconds: number | null }>({
        name: 'lead_outbox_metrics',
        text: LEAD_OUTBOX_METRICS_SQL,
      })
      .then(({ rows: [row] }) => ({ backlog: Number(row!.backlog), ageSeconds: Number(row!.oldest_age_seconds ?? 0) })),
  );
  new Gauge({
    name: 'workspace_lead_outbox_backlog',
    help: 'Leads stored whose workflow is not started yet.',
    registers: [registry],
    async collect() {
      this.set((await read()).backlog);
    },
  });
  new Gauge({
    name: 'workspace_lead_outbox_oldest_age_seconds',
    help: 'Age of the oldest lead whose workflow is not started yet (0 when none).',
    registers: [registry],
    async collect() {
      this.set((await read()).ageSeconds);
    },
  });
}
