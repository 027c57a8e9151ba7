// `npm run bench:chat`: the campaign chat's builtin analyst over HTTP on a campaign with BENCH_CALLS (20,000)
// calls, next to GET /campaigns/{id}/kpis of the same campaign in the same run as the baseline.
//
// - kpis: GET /campaigns/{id}/kpis, the whole answer (one SQL statement over the campaign's leads and calls).
// - chat (rates): POST /campaigns/{id}/chat/stream "What are the connect and pickup rates?": the analyst
//   answers from the same KPI statement. Time to the first delta line, and to the done line.
// - chat (everything): a question naming every topic (rates, hours, outcomes, intelligence, orders): the
//   analyst runs each topic's SQL as it reaches it, so the first delta comes before the last figure is read.
// The three are measured in turn, one request at a time, BENCH_REQUESTS times each after a warm-up, on the
// same campaign; the conversation grows as it would (the cap is raised out of reach). Writes
// bench/results/chat.json and .md.
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { createApp } from '../api/app';
import { createDatabase } from '../lib/database';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { benchAppServices } from './bench-app-services';
import { startBenchPostgres } from './bench-postgres';
import { benchMachine, writeBenchResults } from './results-files';

const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
const WARM_UP = 5;

const percentile = (sorted: number[], share: number) =>
  Number((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? 0).toFixed(2));
const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), count: sorted.length };
};

const bench = await startBenchPostgres('bench-chat-');
try {
  const db = createDatabase(bench.url);
  const { id: workspaceId } = await createWorkspace(db, 'Bench chat', {
    plan: 'ai',
    features: ['d2c'],
    rateLimitPerMinute: 1_000_000,
    chatMessageCap: 1_000_000,
  });
  const member = await addMember(db, workspaceId, 'bench@bench.localhost', 'owner');
  const { key } = await createApiKey(db, member.id, { scopes: ['intel.view', 'campaigns.view', 'sales.view'] });
  const campaign = await db.campaign.create({ data: { workspaceId, name: 'Bench chat' } });

  // Half as many leads as calls: every lead called twice, outcomes and hours spread by position.
  const seeded = performance.now();
  await db.$executeRawUnsafe(
    `INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, status, "workflowId", "requestId", "updatedAt")
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, 'bench-' || n, '+1415' || lpad(n::text, 7, '0'),
            (CASE n % 3 WHEN 0 THEN 'completed' WHEN 1 THEN 'failed' ELSE 'queued' END)::"LeadStatus",
            'lead-bench-' || n, gen_random_uuid(), now()
       FROM generate_series(1, $3::int) n`,
    workspaceId,
    campaign.id,
    Math.ceil(CALLS / 2),
  );
  await db.$executeRawUnsafe(
    `INSERT INTO "Call" (id, "workspaceId", "campaignId", "leadId", attempt, "attemptId", provider, status, outcome,
                         "durationMs", "startedAt", intelligence)
     SELECT gen_random_uuid(), l."workspaceId", l."campaignId", l.id, a, l.id || ':' || a, 'simulated', 'ended', o.outcome,
            CASE WHEN o.outcome = 'answered' THEN 20000 + (k % 60) * 1000 END,
            timestamp '2026-11-16 00:00:00' + ((k * 7) % (7 * 24)) * interval '1 hour' + (k % 60) * interval '1 minute',
            CASE WHEN o.outcome = 'answered' THEN jsonb_build_object('extraction', jsonb_build_object(
              'interest', jsonb_build_object('value', (ARRAY['high', 'medium', 'low'])[1 + k % 3], 'confidence', 0.9, 'evidence', ''),
              'budget', jsonb_build_object('value', CASE WHEN k % 4 = 0 THEN NULL ELSE (k % 10) * 100 END, 'confidence', 0.9, 'evidence', ''))) END
       FROM (SELECT l.*, row_number() OVER (ORDER BY l.id) AS k FROM "Lead" l WHERE l."campaignId" = $1::uuid) l
       CROSS JOIN generate_series(1, 2) a
       CROSS JOIN LATERAL (SELECT (ARRAY['answered', 'no_answer', 'busy', 'voicemail', 'failed', 'answered'])[1 + (k + a) % 6] AS outcome) o`,
    campaign.id,
  );
  await db.$executeRawUnsafe(
    `INSERT INTO "CommerceOrder" (id, "workspaceId", "connectionId", "externalOrderId", "orderNumber", currency, "totalPrice",
                                  "financialStatus", "fulfillmentStatus", "customerName", "placedAt", "attributedToService",
                                  "attributedCampaignId", "updatedAt")
     SELECT gen_random_uuid(), $1::uuid, gen_random_uuid(), n::text, '#' || n, 'USD', (10 + n % 90) || '.90', 'paid', 'unfulfilled',
            'Bench', now(), true, $2::uuid, now()
       FROM generate_series(1, $3::int) n`,
    workspaceId,
    campaign.id,
    Math.ceil(CALLS / 100),
  );
  await db.$executeRawUnsafe('ANALYZE');
  const seedSeconds = Number(((performance.now() - seeded) / 1000).toFixed(1));
  console.error(`seeded ${CALLS} calls in ${seedSeconds} s`);

  const { services, close } = await benchAppServices(db, bench.url);
  const server = createApp(services).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  const kpis = async () => {
    const started = performance.now();
    const response = await fetch(`${apiUrl}/campaigns/${campaign.id}/kpis`, { headers });
    if (response.status !== 200) throw new Error(`kpis answered ${response.status}`);
    await response.json();
    return { doneMs: performance.now() - started };
  };
  /** Times to the first delta line and to the done line, read from the raw stream as a client would. */
  const ask = (message: string) => async () => {
    const started = performance.now();
    const response = await fetch(`${apiUrl}/campaigns/${campaign.id}/chat/stream`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ message }),
    });
    if (response.status !== 200) throw new Error(`chat answered ${response.status}: ${await response.text()}`);
    const decoder = new TextDecoder();
    let pending = '';
    let firstDeltaMs: number | undefined;
    let text = '';
    for await (const chunk of response.body! as AsyncIterable<Uint8Array>) {
      pending += decoder.decode(chunk, { stream: true });
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        const event = JSON.parse(line) as { type: string; text?: string; message?: string };
        if (event.type === 'delta') firstDeltaMs ??= performance.now() - started;
        if (event.type === 'error') throw new Error(`chat failed: ${event.message}`);
        if (event.type === 'done') text = event.text!;
      }
    }
    return { firstDeltaMs: firstDeltaMs!, doneMs: performance.now() - started, text };
  };
  const variants = {
    kpis,
    'chat (rates)': ask('What are the connect and pickup rates?'),
    'chat (everything)': ask(
      'Give me the rates, the best hours, the outcomes, the extracted intelligence and the revenue.',
    ),
  } as const;

  const samples: Record<string, { firstDeltaMs: number[]; doneMs: number[] }> = {};
  let lastAnswer = '';
  for (const run of Object.values(variants)) for (let i = 0; i < WARM_UP; i++) await run();
  // In turn, request by request, so that the three meet the same load of the shared machine.
  for (let i = 0; i < REQUESTS; i++) {
    for (const [name, run] of Object.entries(variants)) {
      const result = (await run()) as { firstDeltaMs?: number; doneMs: number; text?: string };
      const sample = (samples[name] ??= { firstDeltaMs: [], doneMs: [] });
      if (result.firstDeltaMs !== undefined) sample.firstDeltaMs.push(result.firstDeltaMs);
      sample.doneMs.push(result.doneMs);
      if (result.text && name === 'chat (everything)') lastAnswer = result.text;
    }
  }
  const figures = Object.fromEntries(
    Object.entries(samples).map(([name, sample]) => [
      name,
      { firstDelta: sample.firstDeltaMs.length ? summary(sample.firstDeltaMs) : null, done: summary(sample.doneMs) },
    ]),
  );
  server.close();
  await close();
  await db.$disconnect();

  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: {
      calls: CALLS,
      leads: Math.ceil(CALLS / 2),
      attributedOrders: Math.ceil(CALLS / 100),
      requestsPerVariant: REQUESTS,
      warmUp: WARM_UP,
      seedSeconds,
      provider: 'builtin-analyst',
      order: 'one request at a time, the three variants in turn',
    },
    figures,
    sampleAnswer: lastAnswer,
  };
  const row = (name: string) => {
    const figure = figures[name]!;
    return `| ${name} | ${figure.firstDelta ? `${figure.firstDelta.p50Ms} / ${figure.firstDelta.p99Ms}` : '-'} | ${figure.done.p50Ms} / ${figure.done.p99Ms} |`;
  };
  writeBenchResults('chat', result, [
    `# Campaign chat benchmark (${result.measuredAt})`,
    '',
    `The builtin analyst over HTTP (POST /campaigns/{id}/chat/stream, NDJSON read from the raw stream) on a campaign of ${CALLS} calls ` +
      `(${result.setup.leads} leads, ${result.setup.attributedOrders} attributed orders), next to GET /campaigns/{id}/kpis of the same campaign, ` +
      `${REQUESTS} requests each, one at a time, in turn, after ${WARM_UP} warm-up requests; PostgreSQL 15 embedded; ` +
      `${result.machine.cpus} CPUs shared (load average at the end ${os
        .loadavg()
        .map((value) => value.toFixed(1))
        .join(', ')}).`,
    '',
    '| Request | first delta p50 / p99 (ms) | done p50 / p99 (ms) |',
    '|-|-|-|',
    ...Object.keys(figures).map(row),
    '',
    'Answer to the question naming every topic (last request):',
    '',
    '```',
    lastAnswer.trim(),
    '```',
    '',
  ]);
  console.log(JSON.stringify(figures, null, 2));
} finally {
  await bench.stop();
}
