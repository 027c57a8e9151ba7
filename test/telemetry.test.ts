import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { freePort, waitFor } from '../scripts/stack/child-process';
import { startTestCarrier, TEST_CARRIER_SIGNING_SECRET } from './support/carrier';
import { useTestDatabase } from './support/database';
import { startReceiver } from './support/http-receiver';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from './support/ladders';
import { startEntryPoint } from './support/processes';
import { uniqueTaskQueue } from './support/temporal';
import { until } from './support/until';
import { workerProcesses } from './support/worker-process';
import { createTestWorkspace } from './support/workspace';
import { LEAD_OUTBOX_METRICS_SQL } from '../api/http/request-metrics';
import { WORKER_GAUGES_SQL } from '../worker/product-metrics';

// The production entry points (api/main.ts, worker/main.ts) as processes of their own, each with its
// metrics ports and the OTLP endpoint of a local receiver: what an operator's Prometheus and collector see.
const { db, url } = await useTestDatabase();
const taskQueue = uniqueTaskQueue('telemetry');
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
const carrier = await startTestCarrier(db, { timeScale: 0.01 });
const collector = await startReceiver(() => ({ status: 200, json: {} }));
const otlpEndpoint = collector.url.replace(/\/hooks$/, '');
const [apiPort, apiMetricsPort, workerMetricsPort, sdkMetricsPort] = await Promise.all([
  freePort(),
  freePort(),
  freePort(),
  freePort(),
]);
const apiUrl = `http://127.0.0.1:${apiPort}`;
const common = { OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint, LOG_LEVEL: 'warn' };

// Killed at the end of the file, as the worker is (test/support/processes.ts).
startEntryPoint(
  'api/main.ts',
  {
    ...common,
    DATABASE_URL: url,
    TEMPORAL_ADDRESS: inject('stack').temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    PORT: String(apiPort),
    METRICS_PORT: String(apiMetricsPort),
    SIMULATED_CARRIER_SIGNING_SECRET: TEST_CARRIER_SIGNING_SECRET,
  },
  { output: 'ignore' },
);
workerProcesses({
  databaseUrl: url,
  taskQueue,
  carrierUrl: carrier.baseUrl,
  apiUrl,
  env: {
    ...common,
    WORKER_METRICS_PORT: String(workerMetricsPort),
    WORKER_SDK_METRICS_PORT: String(sdkMetricsPort),
  },
})();
await waitFor(
  'the API',
  async () => {
    const health = await fetch(`${apiUrl}/health`);
    if (health.status !== 200) throw new Error(`/health answered ${health.status}`);
  },
  60_000,
);

async function scrape(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

/** The value of one sample, `name{labels}`, of a Prometheus text exposition; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    // Label values may hold braces (a route template): the label set runs to the line's last `} `.
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3]);
  }
  return undefined;
}

async function pushLead(campaignId: string) {
  const response = await fetch(`${apiUrl}/v1/campaigns/${campaignId}/leads/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ leads: [{ lead: { phone: '+14155551000' }, idempotencyKey: randomUUID() }] }),
  });
  expect(response.status).toBe(200);
  return response;
}

const campaign = await db.campaign.create({
  data: {
    workspaceId: owner.workspaceId,
    name: 'Observed',
    acceptsLeadPush: true,
    status: 'RUNNING',
    dialLadder: SINGLE_ATTEMPT,
    callingWindow: ALWAYS_OPEN,
  },
});

describe('metrics endpoints', () => {
  it("serve the API's requests by route and status, its latency, rate-limit refusals and the lead outbox", async () => {
    const route = '/v1/campaigns/{campaignId}/leads/batch';
    const labels = { route, method: 'POST', status: '200' };
    const before = sample(await scrape(apiMetricsPort), 'workspace_http_requests_total', labels) ?? 0;
    await pushLead(campaign.id);
    const after = await scrape(apiMetricsPort);
    expect(sample(after, 'workspace_http_requests_total', labels)).toBe(before + 1);
    expect(sample(after, 'workspace_http_request_duration_seconds_count', labels)).toBe(before + 1);
    expect(sample(after, 'workspace_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(before + 1);
    expect(after).toContain('# TYPE workspace_rate_limit_refusals_total counter');

    // A workspace allowed one request a minute: its second is refused, and counted under its route.
    const throttled = await createTestWorkspace(db, { scopes: ['campaigns.view'] });
    await db.workspace.update({ where: { id: throttled.workspaceId }, data: { rateLimitPerMinute: 1 } });
    const listCampaigns = () =>
      fetch(`${apiUrl}/campaigns`, { headers: { authorization: `Bearer ${throttled.key}` } }).then((r) => r.status);
    expect([await listCampaigns(), await listCampaigns()]).toEqual([200, 429]);
    const refusals = await scrape(apiMetricsPort);
    expect(sample(refusals, 'workspace_rate_limit_refusals_total', { route: '/campaigns' })).toBe(1);
    expect(sample(refusals, 'workspace_http_requests_total', { route: '/campaigns', status: '429' })).toBe(1);
    expect(sample(after, 'workspace_lead_outbox_backlog')).toBeGreaterThanOrEqual(0);
    expect(sample(after, 'workspace_lead_outbox_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it("serve the worker's product gauges and, on their own port, the Temporal SDK's runtime metrics", async () => {
    await pushLead(campaign.id);
    const worker = await until(
      () => scrape(workerMetricsPort).catch(() => ''),
      (text) => text.includes('workspace_credit_holds_open'),
      30_000,
    );
    expect(sample(worker, 'workspace_credit_holds_open')).toBeGreaterThanOrEqual(0);
    expect(sample(worker, 'workspace_credit_holds_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(worker, 'workspace_deliveries_retrying', { kind: 'result_webhook' })).toBe(0);
    expect(sample(worker, 'workspace_deliveries_retrying', { kind: 'crm_delivery' })).toBe(0);
    expect(worker).toContain('# TYPE workspace_calls_placed_total counter');

    // The SDK's exporter publishes once its worker polls: slots, pollers, schedule-to-start latency.
    const sdk = await until(
      () => scrape(sdkMetricsPort).catch(() => ''),
      (text) => text.includes('temporal_worker_task_slots_available') && text.includes('schedule_to_start'),
      30_000,
    );
    expect(sample(sdk, 'temporal_worker_task_slots_available', { task_queue: taskQueue })).toBeGreaterThan(0);
    expect(sdk).toMatch(/temporal_\w*schedule_to_start_latency\w*\{[^}]*task_queue="/);
    expect(sdk).toContain('temporal_num_pollers');
  });

  it('count calls placed by outcome once their outcome is recorded', async () => {
    // Both leads pushed so far have one call each: wait until both have ended, so none ends mid-count.
    await until(
      () => db.call.groupBy({ by: ['status'], where: { campaignId: campaign.id }, _count: true }),
      (groups) => groups.length === 1 && groups[0]!.status === 'ended' && groups[0]!._count === 2,
      30_000,
    );
    const calls = await db.call.findMany({ where: { campaignId: campaign.id, status: 'ended' } });
    // The call's end is recorded by the API (the carrier's event) or by the worker (a reconciled dial).
    const placed = async (outcome: string) =>
      (sample(await scrape(apiMetricsPort), 'workspace_calls_placed_total', { outcome }) ?? 0) +
      (sample(await scrape(workerMetricsPort), 'workspace_calls_placed_total', { outcome }) ?? 0);
    for (const outcome of new Set(calls.map((call) => call.outcome!)))
      expect(await placed(outcome)).toBe(calls.filter((call) => call.outcome === outcome).length);
  });
});

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  service: string;
}

/** Every span the receiver got, with the service.name of the process that sent it. */
function receivedSpans(): OtlpSpan[] {
  return collector.received
    .filter((request) => request.path === '/v1/traces')
    .flatMap((request) => {
      const body = JSON.parse(request.body) as {
        resourceSpans: Array<{
          resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
          scopeSpans: Array<{ spans: Array<Omit<OtlpSpan, 'service'>> }>;
        }>;
      };
      return body.resourceSpans.flatMap((resourceSpans) => {
        const service =
          resourceSpans.resource.attributes.find((attribute) => attribute.key === 'service.name')?.value.stringValue ??
          '';
        return resourceSpans.scopeSpans.flatMap((scope) => scope.spans.map((span) => ({ ...span, service })));
      });
    });
}

describe("the gauges' statements, run at every scrape", () => {
  it('are answered from indexes, never by reading a whole table', async () => {
    const planOf = (statement: string) =>
      db.$transaction(async (tx) => {
        // Sequential scans made the last resort: a plan that still reads a table whole has no index to use.
        await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
        const rows = await tx.$queryRawUnsafe<Array<{ 'QUERY PLAN': string }>>(`EXPLAIN ${statement}`);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      });
    const workerPlan = await planOf(WORKER_GAUGES_SQL);
    expect(workerPlan).not.toContain('Seq Scan');
    expect(workerPlan).toContain('ResultWebhookDelivery_retrying_idx');
    expect(workerPlan).toContain('CrmWebhookDelivery_received_idx');
    const outboxPlan = await planOf(LEAD_OUTBOX_METRICS_SQL);
    expect(outboxPlan).not.toContain('Seq Scan');
    expect(outboxPlan).toContain('Lead_undispatched_idx');
  });
});

describe('traces', () => {
  it('follow one lead from the HTTP request through the workflow start into its activities, exported over OTLP', async () => {
    const response = await pushLead(campaign.id);
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    const trace = await until(
      () => Promise.resolve(receivedSpans()),
      (spans) => {
        const request = spans.find((span) => span.name === 'POST /v1/campaigns/{campaignId}/leads/batch');
        const inTrace = (prefix: string) =>
          spans.some((span) => span.traceId === request?.traceId && span.name.startsWith(prefix));
        // The workflow's own span is exported when its run ends, after its activities'.
        return !!request && inTrace('RunActivity:') && inTrace('RunWorkflow:');
      },
      30_000,
    ).then((spans) => {
      const requests = spans.filter((span) => span.name === 'POST /v1/campaigns/{campaignId}/leads/batch');
      const traced = requests.find((request) =>
        spans.some((span) => span.traceId === request.traceId && span.name.startsWith('RunActivity:')),
      )!;
      return spans.filter((span) => span.traceId === traced.traceId);
    });
    const byId = new Map(trace.map((span) => [span.spanId, span]));
    /** The span's name, then its parent's, up to the root (or a parent not exported yet). */
    const ancestry = (span: OtlpSpan): string[] => {
      const parent = span.parentSpanId ? byId.get(span.parentSpanId) : undefined;
      return [span.name, ...(parent ? ancestry(parent) : [])];
    };
    const dial = trace.find((span) => span.name === 'RunActivity:attemptCall');
    expect(dial, JSON.stringify(trace.map((span) => span.name))).toBeDefined();
    expect(ancestry(dial!)).toEqual([
      'RunActivity:attemptCall',
      'StartActivity:attemptCall',
      'RunWorkflow:leadLadderWorkflowV2',
      'StartWorkflow:leadLadderWorkflowV2',
      'POST /v1/campaigns/{campaignId}/leads/batch',
    ]);
    const services = Object.fromEntries(trace.map((span) => [span.name, span.service]));
    expect(services).toMatchObject({
      'POST /v1/campaigns/{campaignId}/leads/batch': 'workspace-api',
      'StartWorkflow:leadLadderWorkflowV2': 'workspace-api',
      'RunWorkflow:leadLadderWorkflowV2': 'workspace-worker',
      'RunActivity:attemptCall': 'workspace-worker',
    });
  });
});
