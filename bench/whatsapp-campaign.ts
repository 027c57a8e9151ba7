// `npm run bench:whatsapp-campaign`: messages per second through a WHATSAPP campaign end to end, next
// to raw sends straight to the provider, in one run on one PostgreSQL and one Temporal dev server, through
// Meta's twin (the simulated provider process with META_TWIN_ACCOUNTS: the Bearer token on every request, the
// senders bound to meta-twin connections whose token is sealed with SECRETS_KEYS, each send tried once).
// Writes bench/results/whatsapp-campaign.{json,md}.
//
// The production entry points, each its own process: the API (api/main.ts), the worker (worker/main.ts)
// and the simulated WhatsApp provider (simulators/meta-twin/main.ts), which POSTs its signed status
// webhooks to the API's /whatsapp/webhook; its time scale BENCH_TIME_SCALE (default 0.01: a message is
// sent 10 ms, delivered 30 ms and read 80 ms after the provider took it).
//
// - raw sends: BENCH_LEADS sendMessage calls of the same template message from this process straight to
//   the provider's HTTP API (the client the worker uses), BENCH_SEND_CONCURRENCY (default 64, the sockets
//   the worker's provider client keeps: the most sends it has in flight) at once, from a number that is no
//   sender of the workspace (their webhooks are answered 200 and ignored). Then the provider's webhooks of
//   them are let drain before the campaigns start.
// - campaign: a WHATSAPP campaign created, its messaging set (PUT /whatsapp/campaigns/{id}) and started
//   through the API, then BENCH_LEADS leads pushed (POST /v1/campaigns/{id}/leads/batch, 100 a request);
//   each lead's workflow takes its turn on the sender, records its message with its price held, hands it
//   to the provider, and ends when the provider's delivered webhook reaches it. Messages per second: leads
//   over the time from the first push to the last lead finished. Twice: with the sender's messagesPerSecond
//   at BENCH_FAST_PACE (default 1000, so that pacing does not bound the figure), then at the default 80 (the
//   pace must hold: at most 80 messages handed to the provider in any one second). Should the service not
//   reach 80/s on the machine, that pace cannot bind: a third campaign of BENCH_BINDING_LEADS (100) at
//   BENCH_BINDING_PACE (4/s) shows it binding (first to last send at least (leads - 1) / pace seconds).
// Recipients end in 0 to 6 (read, on the simulated provider). After each campaign: one message per lead,
// each handed to the provider once, every lead completed; after all: every hold as its message's status
// says, the ledger sums to the balance.
import { randomInt, randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { apiHealthy, startBenchProcess, startBenchStack, startBenchWorker } from './bench-process';
import { createJsonPoster } from './http-post';
import { ALWAYS_OPEN, pushLeads } from './ladder-campaign';
import { measure } from './measure';
import { benchMachine, writeBenchResults } from './results-files';
import { whatsAppLedgerCheck } from './whatsapp-ledger';
import { createDatabase, type Database } from '../lib/database';
import { META_TWIN_TABLES } from '../simulators/meta-twin/store';
import { connectWhatsAppSender } from '../lib/whatsapp/senders';
import { addMember, createApiKey, createWorkspace, grantCredits } from '../lib/door/workspace-admin';
import { freePort, waitFor } from '../scripts/stack/child-process';
import { createGraphWhatsAppClient } from '../lib/whatsapp/graph-client';
import { connectWhatsApp } from '../lib/whatsapp/connections';
import { keyringSchema, newKeyringEntry } from '../lib/secrets/keyring';

const LEADS = Number(process.env.BENCH_LEADS ?? 1000);
const SEND_CONCURRENCY = Number(process.env.BENCH_SEND_CONCURRENCY ?? 64);
const FAST_PACE = Number(process.env.BENCH_FAST_PACE ?? 1000);
const DEFAULT_PACE = 80;
/** A pace below what the pipeline reaches on a small machine, so that the pacing binds: BENCH_BINDING_LEADS at it. */
const BINDING_PACE = Number(process.env.BENCH_BINDING_PACE ?? 4);
const BINDING_LEADS = Number(process.env.BENCH_BINDING_LEADS ?? 100);
const TIME_SCALE = Number(process.env.BENCH_TIME_SCALE ?? 0.01);
const APP_SECRET = `bench-${randomUUID()}`;
const TEMPLATE = {
  name: 'order_update',
  body: 'Hi {{1}}, your order ships today.',
  category: 'utility',
  examples: ['Ada'],
};
/** Meta's twin: one system user's account, its Business Account and a number per phase (1: the raw sends). */
const metaId = () => `${randomInt(1, 10)}${String(randomInt(10 ** 13, 10 ** 14))}`;
const SECRETS_KEYS = newKeyringEntry('bench');
const TWIN_ACCOUNT = {
  accessToken: `EAAB${randomUUID().replace(/-/g, '')}`,
  businessAccountId: metaId(),
  phoneNumbers: [1, 2, 3, 4].map((phase) => ({ id: metaId(), displayPhoneNumber: `1415555${phase}000` })),
};
const FINISHED = ['completed', 'failed', 'cancelled'] as const;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number) => Number((ms / 1000).toFixed(2));

/** The index-th recipient of a phase: distinct, ending in 0 to 6 (read, on the simulated provider). */
const recipient = (phase: number, index: number) =>
  `+1415${phase}${String(Math.floor(index / 7)).padStart(5, '0')}${index % 7}`;

/** The most messages the provider took from a number in any one second (a window starting at each send). */
async function peakPerSecond(db: Database, phoneNumberId: string): Promise<number> {
  const [row] = await db.$queryRawUnsafe<Array<{ peak: number | null }>>(
    `SELECT max((SELECT count(*) FROM ${META_TWIN_TABLES.message} n
                  WHERE n."phoneNumberId" = m."phoneNumberId" AND n."createdAt" >= m."createdAt"
                    AND n."createdAt" < m."createdAt" + interval '1 second'))::int AS peak
       FROM ${META_TWIN_TABLES.message} m WHERE m."phoneNumberId" = $1`,
    phoneNumberId,
  );
  return row?.peak ?? 0;
}

/** Waits until the provider has delivered every webhook it owes (its record of each message's plan). */
async function providerDrained(db: Database) {
  await waitFor(
    'the simulated provider to deliver its webhooks',
    async () => {
      const [row] = await db.$queryRawUnsafe<Array<{ left: number }>>(
        `SELECT count(*)::int AS left FROM ${META_TWIN_TABLES.message} WHERE "eventsDelivered" < jsonb_array_length(plan)`,
      );
      if (row!.left) throw new Error(`${row!.left} messages with webhooks left`);
    },
    300_000,
  );
}

const { stack, stop, started, databaseUrl } = await startBenchStack('bench_whatsapp');
try {
  const db = createDatabase(databaseUrl, { poolSize: 4 });
  const { id: workspaceId } = await createWorkspace(db, 'Bench', { rateLimitPerMinute: 100_000_000 });
  await grantCredits(db, workspaceId, 1_000_000);
  const { key } = await createApiKey(db, (await addMember(db, workspaceId, 'bench@bench.localhost', 'owner')).id, {
    scopes: ['campaigns.edit', 'campaigns.view', 'whatsapp.edit', 'whatsapp.view'],
  });

  // The three processes; the provider's port is chosen first, as the API must know it.
  const [providerPort, apiPort] = [await freePort(), await freePort()];
  const providerUrl = `http://127.0.0.1:${providerPort}`;
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const taskQueue = `bench-whatsapp-${randomUUID()}`;
  const provider = startBenchProcess('simulators/meta-twin/main.ts', {
    DATABASE_URL: databaseUrl,
    WHATSAPP_APP_SECRET: APP_SECRET,
    SIMULATED_WHATSAPP_PORT: String(providerPort),
    SIMULATED_WHATSAPP_WEBHOOK_URL: `${apiUrl}/whatsapp/webhook`,
    SIMULATED_WHATSAPP_TIME_SCALE: String(TIME_SCALE),
    META_TWIN_ACCOUNTS: JSON.stringify([TWIN_ACCOUNT]),
  });
  const api = startBenchProcess('api/main.ts', {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    PORT: String(apiPort),
    SIMULATED_WHATSAPP_URL: providerUrl,
    WHATSAPP_APP_SECRET: APP_SECRET,
    SECRETS_KEYS,
    EXPORT_DIR: path.join(os.tmpdir(), `bench-whatsapp-exports-${process.pid}`),
  });
  const worker = startBenchWorker(
    { databaseUrl, temporalAddress: stack.temporalAddress, taskQueue, bundlePath: stack.workflowBundlePath },
    { SIMULATED_WHATSAPP_URL: providerUrl, SECRETS_KEYS },
  );
  started.push(provider, api, worker);
  await provider.printed('(Meta twin) listening');
  await apiHealthy(apiUrl);
  await worker.printed('worker polling');
  const client = createJsonPoster(apiUrl, { authorization: `Bearer ${key}` }, 4);
  /** 503s answered (temporal_unavailable: a transition not accepted within its 5 s), each retried after 2 s as a client does. */
  const unavailable: string[] = [];
  const call = async (
    method: 'GET' | 'POST' | 'PUT',
    pathname: string,
    body: unknown,
    expected: number,
  ): Promise<Record<string, unknown>> => {
    const response =
      method === 'POST'
        ? await client.post(pathname, body)
        : await fetch(`${apiUrl}${pathname}`, {
            method,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            ...(body !== undefined && { body: JSON.stringify(body) }),
          }).then(async (answer) => ({ status: answer.status, text: await answer.text() }));
    if (response.status === 503 && expected !== 503 && unavailable.length < 20) {
      unavailable.push(`${method} ${pathname}: ${response.text}`);
      console.error(`503 (retried in 2 s): ${method} ${pathname}: ${response.text}`);
      await sleep(2_000);
      return call(method, pathname, body, expected);
    }
    if (response.status !== expected) throw new Error(`${method} ${pathname}: ${response.status} ${response.text}`);
    return JSON.parse(response.text || 'null') as Record<string, unknown>;
  };

  // A sender per campaign, the sender's pace as the campaign needs it; the number's tier as many
  // recipients a day as the run has leads (the default 1000 would hold the rest a day). Connected before
  // the template, which belongs to their WhatsApp Business Account.
  const senders: Record<number, { id: string; phoneNumberId: string }> = {};
  for (const [phase, messagesPerSecond] of [
    [2, FAST_PACE],
    [3, DEFAULT_PACE],
    [4, BINDING_PACE],
  ] as const) {
    const number = TWIN_ACCOUNT.phoneNumbers[phase - 1]!;
    const connection = await connectWhatsApp(db, keyringSchema.parse(SECRETS_KEYS), {
      workspaceId,
      provider: 'meta-twin',
      phoneNumberId: number.id,
      businessAccountId: TWIN_ACCOUNT.businessAccountId,
      displayPhoneNumber: number.displayPhoneNumber,
      baseUrl: providerUrl,
      accessToken: TWIN_ACCOUNT.accessToken,
    });
    const { id } = await connectWhatsAppSender(db, {
      workspaceId,
      e164: `+1415555${phase}000`,
      provider: 'simulated',
      connectionId: connection.id,
    });
    senders[phase] = await db.whatsAppSender.update({
      where: { id },
      data: { messagesPerSecond, dailyRecipientLimit: Math.max(1000, LEADS) },
    });
  }

  /**
   * POST /campaigns/{id}/start; a 503 temporal_unavailable (the transition not accepted within the API's
   * 5 s) may still have started it, which a second start would refuse (409 from RUNNING): the campaign is
   * read until it runs, and started again only if it does not within 30 s.
   */
  const startCampaign = async (campaignId: string): Promise<void> => {
    const response = await client.post(`/campaigns/${campaignId}/start`, undefined);
    if (response.status === 200) return;
    // 500: the API maps the Update's deadline cancelled mid-call (WorkflowUpdateRPCTimeoutOrCancelledError) to internal_error.
    if ((response.status !== 503 && response.status !== 500) || unavailable.length >= 20)
      throw new Error(`POST /campaigns/${campaignId}/start: ${response.status} ${response.text}`);
    unavailable.push(`POST /campaigns/{id}/start: ${response.status} ${response.text}`);
    console.error(`${response.status} on start: ${response.text}; reading the campaign`);
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(1_000))
      if ((await call('GET', `/campaigns/${campaignId}`, undefined, 200)).status === 'RUNNING') return;
    await startCampaign(campaignId);
  };

  // The template, through the API and reviewed by the provider (a plain name is APPROVED).
  const { id: templateId } = (await call('POST', '/whatsapp/templates', { language: 'en_US', ...TEMPLATE }, 201)) as {
    id: string;
  };
  await waitFor(
    'the template approved',
    async () => {
      const { status } = await call('GET', `/whatsapp/templates/${templateId}`, undefined, 200);
      if (status !== 'APPROVED') throw new Error(`still ${String(status)}`);
    },
    60_000,
  );

  // 1. Raw sends straight to the provider, from a number that is no sender of ours.
  const providerClient = createGraphWhatsAppClient({
    baseUrl: providerUrl,
    accessToken: TWIN_ACCOUNT.accessToken,
    name: 'meta-twin',
  });
  // The account's number of no sender of ours (their webhooks are answered 200 and ignored).
  const rawNumber = TWIN_ACCOUNT.phoneNumbers[0]!.id;
  const raw = await measure(LEADS, SEND_CONCURRENCY, async (index) => {
    await providerClient.sendMessage({
      phoneNumberId: rawNumber,
      to: recipient(1, index),
      callbackData: randomUUID(),
      message: { type: 'template', template: { name: TEMPLATE.name, language: 'en_US', parameters: ['Lead'] } },
    });
  });
  const rawSends = {
    ...raw,
    seconds: seconds((LEADS / raw.perSecond) * 1000),
    providerRecorded: (
      await db.sql<{ count: number }>(
        `SELECT count(*)::int AS count FROM ${META_TWIN_TABLES.message} WHERE "phoneNumberId" = $1`,
        rawNumber,
      )
    )[0]!.count,
  };
  console.error('raw sends', JSON.stringify(rawSends));
  await providerDrained(db);

  // 2. The campaigns: the same messages through the whole service.
  const runCampaign = async (phase: number, messagesPerSecond: number, leads = LEADS) => {
    const sender = senders[phase]!;
    const senderId = sender.id;
    const campaign = await call(
      'POST',
      '/campaigns',
      { name: `Bench ${messagesPerSecond}/s`, channel: 'WHATSAPP', acceptsLeadPush: true, callingWindow: ALWAYS_OPEN },
      201,
    );
    const campaignId = campaign.id as string;
    await call(
      'PUT',
      `/whatsapp/campaigns/${campaignId}`,
      {
        senderId,
        templateId,
        variables: { '1': { field: 'name', fallback: 'there' } },
        sendingWindow: ALWAYS_OPEN,
      },
      200,
    );
    await startCampaign(campaignId);
    const firstPush = performance.now();
    const post = async (pathname: string, body: unknown, expected: number) => {
      await call('POST', pathname, body, expected);
    };
    await pushLeads(post, campaignId, leads, (index) => ({
      lead: { phone: recipient(phase, index), name: `Lead ${index}` },
      idempotencyKey: `bench-${phase}-${index}`,
    }));
    const pushSeconds = seconds(performance.now() - firstPush);
    let finished = 0;
    let reportedAt = 0;
    while (finished < leads) {
      await sleep(100);
      finished = await db.lead.count({ where: { campaignId, status: { in: [...FINISHED] } } });
      const elapsed = Math.round((performance.now() - firstPush) / 1000);
      if (elapsed - reportedAt >= 30) {
        reportedAt = elapsed;
        console.error(`${messagesPerSecond}/s: ${elapsed} s, ${finished} of ${leads} leads finished`);
      }
    }
    const totalSeconds = seconds(performance.now() - firstPush);
    const [check] = await db.$queryRawUnsafe<
      Array<{
        leads: number;
        completed: number;
        messages: number;
        leadsWithoutOneMessage: number;
        handedToProvider: number;
        providerRecipients: number;
        firstToLastSendSeconds: number | null;
      }>
    >(
      `SELECT (SELECT count(*) FROM "Lead" WHERE "campaignId" = $1::uuid)::int AS leads,
              (SELECT count(*) FROM "Lead" WHERE "campaignId" = $1::uuid AND status = 'completed')::int AS completed,
              (SELECT count(*) FROM "WhatsAppMessage" WHERE "campaignId" = $1::uuid)::int AS messages,
              (SELECT count(*) FROM "Lead" l WHERE l."campaignId" = $1::uuid
                  AND (SELECT count(*) FROM "WhatsAppMessage" m WHERE m."leadId" = l.id) <> 1)::int AS "leadsWithoutOneMessage",
              (SELECT count(*) FROM ${META_TWIN_TABLES.message} WHERE "phoneNumberId" = $2)::int AS "handedToProvider",
              (SELECT count(DISTINCT "to") FROM ${META_TWIN_TABLES.message} WHERE "phoneNumberId" = $2)::int AS "providerRecipients",
              (SELECT extract(epoch FROM max("createdAt") - min("createdAt")) FROM ${META_TWIN_TABLES.message} WHERE "phoneNumberId" = $2)::float AS "firstToLastSendSeconds"`,
      campaignId,
      sender.phoneNumberId,
    );
    // Where a lead's time goes, seconds from its push: its message recorded (its turn on the sender taken,
    // the hold written), handed to the provider, the provider's delivered webhook recorded, the lead finished.
    const [timing] = await db.$queryRawUnsafe<Array<Record<string, number | null>>>(
      `WITH steps AS (
         SELECT extract(epoch FROM m."createdAt" - l."createdAt") AS recorded,
                extract(epoch FROM p."createdAt" - l."createdAt") AS handed,
                extract(epoch FROM e."receivedAt" - l."createdAt") AS delivered,
                extract(epoch FROM l."updatedAt" - l."createdAt") AS finished
           FROM "Lead" l JOIN "WhatsAppMessage" m ON m."leadId" = l.id
           JOIN ${META_TWIN_TABLES.message} p ON p.payload->>'callbackData' = m.id::text
           LEFT JOIN "WhatsAppWebhookEvent" e ON e."eventKey" = 'status:' || m."providerMessageId" || ':delivered'
          WHERE l."campaignId" = $1::uuid)
       SELECT ${['recorded', 'handed', 'delivered', 'finished']
         .flatMap((step) => [
           `percentile_cont(0.5) WITHIN GROUP (ORDER BY ${step})::float AS "${step}P50"`,
           `percentile_cont(0.9) WITHIN GROUP (ORDER BY ${step})::float AS "${step}P90"`,
         ])
         .join(', ')}
         FROM steps`,
      campaignId,
    );
    const result = {
      messagesPerSecondSetting: messagesPerSecond,
      secondsFromPush: Object.fromEntries(
        Object.entries(timing!).map(([name, value]) => [name, value === null ? null : Number(value.toFixed(2))]),
      ),
      pushSeconds,
      firstPushToLastLeadFinishedSeconds: totalSeconds,
      messagesPerSecond: Number((leads / totalSeconds).toFixed(1)),
      peakHandedToProviderInOneSecond: await peakPerSecond(db, sender.phoneNumberId),
      ...check!,
      firstToLastSendSeconds: Number((check!.firstToLastSendSeconds ?? 0).toFixed(2)),
      oneMessagePerLead:
        check!.completed === leads &&
        check!.messages === leads &&
        check!.leadsWithoutOneMessage === 0 &&
        check!.handedToProvider === leads &&
        check!.providerRecipients === leads,
      workerMemory: worker.memory(),
    };
    console.error('campaign', JSON.stringify(result));
    return result;
  };
  const fast = await runCampaign(2, FAST_PACE);
  await providerDrained(db);
  const paced = await runCampaign(3, DEFAULT_PACE);
  await providerDrained(db);
  const binding = await runCampaign(4, BINDING_PACE, BINDING_LEADS);
  await providerDrained(db);
  const bindingFloorSeconds = (BINDING_LEADS - 1) / BINDING_PACE;
  const ledger = await whatsAppLedgerCheck(db, workspaceId);
  console.error('ledger', JSON.stringify(ledger));

  for (const running of started.splice(0)) running.stop();
  // The stopped processes let go of Temporal and PostgreSQL before the stack stops.
  await sleep(3_000);
  client.close();
  await db.$disconnect();

  const temporalCli = process.env.TEMPORAL_CLI_PATH ?? '';
  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: {
      leads: LEADS,
      sendConcurrency: SEND_CONCURRENCY,
      timeScale: TIME_SCALE,
      deliveredAfterSendMs: 3000 * TIME_SCALE,
      template: TEMPLATE,
      recipients: 'distinct, ending in 0 to 6 (sent, delivered, read)',
      temporal: `dev server of ${path.basename(path.dirname(temporalCli)) || 'the Temporal CLI'} (in memory, SQLite), started by scripts/stack/ephemeral-stack.ts`,
      postgres: 'embedded, not durable (the test stack: fsync off)',
      processes:
        'api/main.ts, worker/main.ts, simulators/meta-twin/main.ts, each its own process; this process pushes and polls',
    },
    rawSends,
    campaign: fast,
    pacedCampaign: paced,
    bindingPaceCampaign: { ...binding, firstToLastSendAtLeastSeconds: bindingFloorSeconds },
    unavailableRetried: unavailable,
    campaignOverRaw: Number((fast.messagesPerSecond / rawSends.perSecond).toFixed(3)),
    ledger,
  };
  const loadAverage = os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');
  const row = (name: string, perSecond: number, total: number, note: string, leads = LEADS) =>
    `| ${name} | ${leads} | ${perSecond} | ${total} | ${note} |`;
  writeBenchResults('whatsapp-campaign', result, [
    `# WhatsApp campaign benchmark (${result.measuredAt})`,
    '',
    ...(process.env.BENCH_NOTE ? [`**${process.env.BENCH_NOTE}**`, ''] : []),
    `${LEADS} template messages, three ways in one run on one PostgreSQL and one Temporal dev server (${result.setup.temporal}); the API, the worker and Meta's twin (the simulated WhatsApp provider with META_TWIN_ACCOUNTS: the Bearer token on every request, senders on meta-twin connections) each their own process (time scale ${TIME_SCALE}: delivered ${result.setup.deliveredAfterSendMs} ms after the provider took the message); ${result.machine.cpus} CPUs shared by everything (load average at the end ${loadAverage}); Node ${process.version}.`,
    '',
    '| path | messages | messages/s | seconds | |',
    '|-|-|-|-|-|',
    row(
      'raw sends to the provider',
      rawSends.perSecond,
      rawSends.seconds,
      `sendMessage over HTTP, ${SEND_CONCURRENCY} at once; p50 ${rawSends.p50Ms} ms, p99 ${rawSends.p99Ms} ms`,
    ),
    row(
      `campaign, sender at ${FAST_PACE}/s`,
      fast.messagesPerSecond,
      fast.firstPushToLastLeadFinishedSeconds,
      `first push to last lead finished (pushes took ${fast.pushSeconds} s); peak ${fast.peakHandedToProviderInOneSecond} handed to the provider in one second`,
    ),
    row(
      `campaign, sender at ${DEFAULT_PACE}/s (default)`,
      paced.messagesPerSecond,
      paced.firstPushToLastLeadFinishedSeconds,
      `peak ${paced.peakHandedToProviderInOneSecond} handed to the provider in one second (pace ${DEFAULT_PACE}: ${paced.peakHandedToProviderInOneSecond <= DEFAULT_PACE ? 'held' : '**NOT held**'})`,
    ),
    row(
      `campaign, sender at ${BINDING_PACE}/s (binding)`,
      binding.messagesPerSecond,
      binding.firstPushToLastLeadFinishedSeconds,
      `peak ${binding.peakHandedToProviderInOneSecond} in one second; first to last send ${binding.firstToLastSendSeconds} s (at least ${bindingFloorSeconds} s at ${BINDING_PACE}/s: ${binding.firstToLastSendSeconds >= bindingFloorSeconds ? 'held' : '**NOT held**'})`,
      BINDING_LEADS,
    ),
    '',
    `- Campaign / raw sends: **${result.campaignOverRaw}x** of the raw sends' rate. A campaign's message is, per lead: a workflow started by the push, its turn on the sender (one UPDATE), the message recorded with its hold (one transaction), the send activity, then the provider's sent and delivered webhooks (signature, one statement each, the hold posted, the lead signalled) and the lead finished with its result.`,
    `- The pace is each sender's schedule (WhatsAppSender.nextSendAt advanced by 1/messagesPerSecond per message in one UPDATE): it bounds the rate only when the service would go faster. ${paced.messagesPerSecond < DEFAULT_PACE ? `Here the service reached ${paced.messagesPerSecond}/s, below ${DEFAULT_PACE}/s, so the default pace did not bind (its peak is the service's own); the ${BINDING_PACE}/s campaign shows the pacing binding.` : `Here the service reached ${paced.messagesPerSecond}/s at the default pace.`}`,
    `- Seconds from a lead's push (p50 / p90) to its message recorded (its turn on the sender and its hold taken), handed to the provider, the delivered webhook recorded, the lead finished: sender at ${FAST_PACE}/s ${JSON.stringify(fast.secondsFromPush)}; at ${DEFAULT_PACE}/s ${JSON.stringify(paced.secondsFromPush)}.`,
    ...[fast, paced, binding].map(
      (run) =>
        `- Sender at ${run.messagesPerSecondSetting}/s: ${run.completed} of ${run.leads} leads completed; ${run.messages} messages, ${run.handedToProvider} handed to the provider (${run.providerRecipients} recipients), leads without exactly one message: ${run.leadsWithoutOneMessage} (one message per lead: ${run.oneMessagePerLead ? 'yes' : '**NO**'}); first to last send ${run.firstToLastSendSeconds} s.`,
    ),
    `- Requests answered 503 temporal_unavailable or, for a start, 500 internal_error (the Temporal dev server did not accept a transition within the API's 5 s; a start is then read back until the campaign runs, anything else retried after 2 s): ${unavailable.length ? unavailable.join('; ') : 'none'}.`,
    `- Holds after the campaigns: ${JSON.stringify(ledger.holds)} (holdNotAsStatus: a message whose hold is not posted with one charge once delivered or read); the ledger ${ledger.ledgerSumsToBalance ? 'sums to' : '**DOES NOT sum to**'} the balance ${ledger.balance}.`,
    LEADS < 1000
      ? `- **A small-scale run** (${LEADS} leads, not the default 1,000) on a shared machine: the shape, not the figure.`
      : '',
    '',
  ]);
  console.log(JSON.stringify({ rawSends, campaign: fast, pacedCampaign: paced, bindingPaceCampaign: binding, ledger }));
  const ok =
    fast.oneMessagePerLead &&
    paced.oneMessagePerLead &&
    binding.oneMessagePerLead &&
    ledger.ledgerSumsToBalance &&
    !ledger.holds.holdNotAsStatus &&
    !ledger.holds.pending;
  if (!ok) process.exitCode = 1;
} finally {
  for (const running of started) running.stop();
  await stop();
}
process.exit(process.exitCode ?? 0);
