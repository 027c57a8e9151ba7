// `npm run bench:intake` (issue 28): the two intake paths against their baselines, on the stack the benches
// start (scripts/stack/ephemeral-stack.ts: PostgreSQL and the Temporal CLI dev server, in memory), in one
// run, alternating rounds. Writes bench/results/intake.json and .md.
//
// (a) Lead workflows started per second through the API against raw starts. The API is api/main.ts in its
//     own process, as deployed, its task queue polled by no worker (only the starts are measured). A round
//     pushes BENCH_LEADS leads into a WHATSAPP campaign (its leads start at once: no line to wait for) as
//     POST /v1/campaigns/{id}/leads/batch of 100, BENCH_BATCHES_IN_FLIGHT at once, and is timed from the first
//     push until every one of its leads has its workflow started (the outbox, lib/temporal/lead-dispatch.ts,
//     starts them after the answers and marks them; the rate is read from those marks). The baseline: as many
//     `client.workflow.start` of a trivial workflow from this process, BENCH_RAW_CONCURRENCY at once, on the
//     same server. Goal: at least 0.7x.
// (b) Carrier events applied per second (POST /telephony/{provider}/events, signed, each applied to a real
//     Call row: ringing then in-progress per call, as bench/telephony-events.ts) against a bare route of the
//     same Express app behind the same middleware (createApp's benchRoutes), same params, body and response
//     schemas, answering without signature check or database, sent the same signed bodies. The app runs in
//     its own process (bench/intake-events-server.ts), the load in another (bench/load-signed-events.ts).
//     Goal: at least 0.5x.
// BENCH_API_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) goes to both measured app processes;
// BENCH_PARTS=a,b picks the parts.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { alternatingRounds, webhookAgainstBare, type LoadRun } from './alternating-rounds';
import { apiHealthy, nodeArgsFromEnv, startBenchProcess, startBenchStack } from './bench-process';
import { createJsonPoster } from './http-post';
import { runLoadProcess } from './load-process';
import { cpuSecondsBetween, cpuSecondsByProcess, descendsFrom, measure } from './measure';
import { benchMachine, writeBenchResults } from './results-files';
import { createDatabase } from '../lib/database';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { freePort } from '../scripts/stack/child-process';

const LEADS = Number(process.env.BENCH_LEADS ?? 3000);
const BATCHES_IN_FLIGHT = Number(process.env.BENCH_BATCHES_IN_FLIGHT ?? 4);
const RAW_CONCURRENCY = Number(process.env.BENCH_RAW_CONCURRENCY ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '10').split(',').map(Number);
const CALLS = Number(process.env.BENCH_CALLS ?? 60_000);
const PARTS = (process.env.BENCH_PARTS ?? 'a,b').split(',');
const PROVIDER = 'simulated';
const SECRET = `bench-${randomUUID()}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ratio = (a: number, b: number) => Number((a / b).toFixed(3));

const { stack, stop, started, databaseUrl } = await startBenchStack('intake');
try {
  const db = createDatabase(databaseUrl, { poolSize: 4 });
  const { id: workspaceId } = await createWorkspace(db, 'Bench', { rateLimitPerMinute: 100_000_000 });
  const { key } = await createApiKey(db, (await addMember(db, workspaceId, 'bench@bench.localhost', 'owner')).id, {
    scopes: ['campaigns.edit'],
  });
  const apiNodeArgs = nodeArgsFromEnv('BENCH_API_NODE_ARGS');
  const cpuNow = () =>
    cpuSecondsByProcess(
      (dir) => readdirSync(dir),
      (file) => readFileSync(file, 'utf8'),
    );
  /** CPU ms per unit of work of each process group of this run (the machine may run other people's servers too). */
  const cpuMsPer = (
    units: number,
    before: ReturnType<typeof cpuNow>,
    after: ReturnType<typeof cpuNow>,
    appPid: number,
    appName: string,
    benchName: string,
  ) =>
    Object.fromEntries(
      Object.entries(
        cpuSecondsBetween(before, after, (pid, name) =>
          pid === process.pid
            ? benchName
            : pid === appPid
              ? appName
              : descendsFrom(after, pid, process.pid)
                ? name
                : 'other work on the machine',
        ),
      ).map(([group, seconds]) => [group, Number(((seconds * 1000) / units).toFixed(3))]),
    );
  const result: Record<string, unknown> = { measuredAt: new Date().toISOString(), machine: benchMachine() };
  const lines: string[] = [];

  if (PARTS.includes('a')) {
    const taskQueue = `bench-intake-${randomUUID()}`;
    const port = await freePort();
    const api = startBenchProcess(
      'api/main.ts',
      {
        DATABASE_URL: databaseUrl,
        TEMPORAL_ADDRESS: stack.temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        PORT: String(port),
        METRICS_PORT: '0',
        EXPORT_DIR: path.join(os.tmpdir(), 'bench-exports'),
      },
      apiNodeArgs,
    );
    started.push(api);
    const apiUrl = `http://127.0.0.1:${port}`;
    await apiHealthy(apiUrl);
    const poster = createJsonPoster(apiUrl, { authorization: `Bearer ${key}` }, BATCHES_IN_FLIGHT);
    const connection = await Connection.connect({ address: stack.temporalAddress });
    const temporal = new Client({ connection });
    // WHATSAPP: its leads start at once (no line to wait for); lines enough should it ever be a voice one.
    const campaign = await db.campaign.create({
      data: {
        workspaceId,
        name: 'Bench intake',
        channel: 'WHATSAPP',
        acceptsLeadPush: true,
        status: 'RUNNING',
        maxConcurrentCalls: 10_000,
      },
    });
    let round = 0;
    type StartRun = LoadRun & { seconds: number };
    const asRun = (count: number, seconds: number, p50Ms = 0, p99Ms = 0): StartRun => ({
      requests: count,
      errors: 0,
      rps: Math.round(count / seconds),
      p50Ms,
      p99Ms,
      p90Ms: 0,
      seconds: Number(seconds.toFixed(2)),
    });
    const rawRound = async (): Promise<StartRun> => {
      const begin = performance.now();
      const run = await measure(LEADS, RAW_CONCURRENCY, async () => {
        await temporal.workflow.start('benchNothing', {
          workflowId: `raw-${randomUUID()}`,
          taskQueue: `${taskQueue}-raw`,
        });
      });
      return asRun(LEADS, (performance.now() - begin) / 1000, run.p50Ms, run.p99Ms);
    };
    const intakeRound = async (): Promise<StartRun> => {
      const prefix = `r${round++}-`;
      const begin = performance.now();
      const batches = await measure(Math.ceil(LEADS / 100), BATCHES_IN_FLIGHT, async (index) => {
        const size = Math.min(100, LEADS - index * 100);
        const response = await poster.post(`/v1/campaigns/${campaign.id}/leads/batch`, {
          leads: Array.from({ length: size }, (_, at) => ({
            lead: { phone: '+14155550125' },
            idempotencyKey: `${prefix}${index * 100 + at}`,
          })),
        });
        if (response.status !== 200) throw new Error(`batch: ${response.status} ${response.text}`);
        const { summary } = JSON.parse(response.text) as { summary: { queued: number } };
        if (summary.queued !== size) throw new Error(`batch: ${summary.queued} of ${size} queued: ${response.text}`);
      });
      // Every lead of the round started: the outbox marks each once Temporal has its workflow.
      // Read through the outbox's own index (workflowStartedAt, createdAt): only the rows still unstarted are
      // visited, so the polling costs PostgreSQL next to nothing (a count over the campaign's rows every 25 ms
      // had cost it more than the leads' own marks).
      for (;;) {
        const [row] = await db.$queryRawUnsafe<Array<{ waiting: boolean }>>(
          `SELECT EXISTS (SELECT 1 FROM "Lead" WHERE "workflowStartedAt" IS NULL AND "campaignId" = $1::uuid) AS waiting`,
          campaign.id,
        );
        if (!row!.waiting) break;
        await sleep(25);
      }
      return asRun(LEADS, (performance.now() - begin) / 1000, batches.p50Ms, batches.p99Ms);
    };
    // CPU per start of each process group of this run (the machine may run other people's servers too).
    const cpuMs = { raw: {} as Record<string, number>, intake: {} as Record<string, number> };
    const { runs, summary } = await alternatingRounds(
      ['raw', 'intake'] as const,
      ROUNDS,
      async (variant) => {
        const before = cpuNow();
        const run = await (variant === 'raw' ? rawRound() : intakeRound());
        // The last round's figures (the warm-up's are overwritten).
        cpuMs[variant] = cpuMsPer(LEADS, before, cpuNow(), api.pid, 'API', 'bench (load, raw client)');
        return run;
      },
      'starts',
    );
    const raw = summary('raw');
    const intake = summary('intake');
    const leadsStarted = {
      leadsPerRound: LEADS,
      batchesInFlight: BATCHES_IN_FLIGHT,
      rawConcurrency: RAW_CONCURRENCY,
      rawStartsPerSecond: raw.rps,
      leadWorkflowsStartedPerSecond: intake.rps,
      batchP50Ms: intake.p50Ms,
      batchP99Ms: intake.p99Ms,
      intakeOverRaw: ratio(intake.rps, raw.rps),
      roundRatios: runs.raw.map((run, index) => ratio(runs.intake[index]!.rps, run.rps)),
      cpuMsPerStart: cpuMs,
      goalAtLeast: 0.7,
      runs,
    };
    console.error('(a)', JSON.stringify({ ...leadsStarted, runs: undefined }));
    result.leadsStarted = leadsStarted;
    lines.push(
      '## (a) Lead workflows started per second, through the API, against raw starts',
      '',
      `${LEADS} leads a round pushed into a WHATSAPP campaign as batches of 100 (${BATCHES_IN_FLIGHT} in flight) to api/main.ts in its own process, timed until every lead's workflow was started (the outbox's marks); raw: as many \`client.workflow.start\` of a trivial workflow, ${RAW_CONCURRENCY} at once, from the bench process. Same dev server; ${ROUNDS} alternating rounds after a warm-up of each, medians.`,
      '',
      '| variant | workflows started/s | batch p50 ms | batch p99 ms |',
      '|-|-|-|-|',
      `| raw client.workflow.start | ${raw.rps} | | |`,
      `| API batch push, outbox start | ${intake.rps} | ${intake.p50Ms} | ${intake.p99Ms} |`,
      '',
      `- Ratio **${leadsStarted.intakeOverRaw}x** (goal at least 0.7x); per round: ${leadsStarted.roundRatios.join(', ')}.`,
      `- CPU ms per start by process (last round of each): raw ${JSON.stringify(cpuMs.raw)}; through the API ${JSON.stringify(cpuMs.intake)}.`,
      '',
    );
    poster.close();
    await connection.close();
    api.stop();
  }

  if (PARTS.includes('b')) {
    // Calls as the ladder records them once dialed: each a lead with one dialing call.
    const campaign = await db.campaign.create({ data: { workspaceId, name: 'Bench events', status: 'RUNNING' } });
    const rows = await db.$queryRawUnsafe<Array<{ attemptId: string; providerCallId: string }>>(
      `WITH leads AS (
         INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, "workflowId", "requestId", status, "updatedAt", "workflowStartedAt")
         SELECT gen_random_uuid(), $1::uuid, $2::uuid, 'bench-' || n, '+14155550120', 'lead-bench-' || n, gen_random_uuid(), 'dialing', now(), now()
           FROM generate_series(1, $3::int) AS n
         RETURNING id)
       INSERT INTO "Call" (id, "workspaceId", "campaignId", "leadId", attempt, "attemptId", provider, status, "providerCallId", "startedAt")
       SELECT gen_random_uuid(), $1::uuid, $2::uuid, id, 1, id::text || ':1', $4, 'dialing', 'sim_' || md5(id::text), now() AT TIME ZONE 'UTC'
         FROM leads
       RETURNING "attemptId", "providerCallId"`,
      workspaceId,
      campaign.id,
      CALLS,
      PROVIDER,
    );
    const callsFile = path.join(os.tmpdir(), `bench-intake-calls-${process.pid}.txt`);
    writeFileSync(callsFile, rows.map((row) => `${row.attemptId} ${row.providerCallId}`).join('\n'));
    const port = await freePort();
    const app = startBenchProcess(
      'bench/intake-events-server.ts',
      {
        DATABASE_URL: databaseUrl,
        TEMPORAL_ADDRESS: stack.temporalAddress,
        PORT: String(port),
        BENCH_SIGNING_SECRET: SECRET,
        BENCH_PROVIDER: PROVIDER,
      },
      apiNodeArgs,
    );
    started.push(app);
    await app.printed('intake events app listening');
    const baseUrl = `http://127.0.0.1:${port}`;
    const targets = {
      bare: `${baseUrl}/bench/telephony/${PROVIDER}/events`,
      events: `${baseUrl}/telephony/${PROVIDER}/events`,
    };
    type Run = LoadRun & {
      applied: number;
      appliedByStatus: Record<string, { answered: number; applied: number }>;
      callsUsed: number;
    };
    let nextCall = 0;
    // CPU ms per request of each process group, the last round of each route.
    const cpuMsPerEvent = { bare: {} as Record<string, number>, events: {} as Record<string, number> };
    // Transactions committed in the bench's database per event (the events' statements, batched or not), the last
    // events round; PostgreSQL publishes its counters within a second, hence the wait.
    const commits = async () => {
      const [row] = await db.$queryRawUnsafe<Array<{ commits: bigint }>>(
        `SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = current_database()`,
      );
      return Number(row!.commits);
    };
    let commitsPerEvent = 0;
    const levels = await webhookAgainstBare(CONNECTIONS, ROUNDS, async (variant, connections) => {
      const first = variant === 'webhook' ? nextCall : 0;
      const before = cpuNow();
      const commitsBefore = variant === 'webhook' ? await commits() : 0;
      const run = await runLoadProcess<Run>(
        'bench/load-signed-events.ts',
        [
          variant === 'webhook' ? targets.events : targets.bare,
          callsFile,
          String(first),
          String(connections),
          String(SECONDS),
        ],
        { BENCH_SIGNING_SECRET: SECRET },
      );
      cpuMsPerEvent[variant === 'webhook' ? 'events' : 'bare'] = cpuMsPer(
        Math.max(1, run.requests),
        before,
        cpuNow(),
        app.pid,
        'app',
        'bench',
      );
      if (variant === 'webhook') {
        nextCall += run.callsUsed;
        await sleep(1_100);
        commitsPerEvent = ratio((await commits()) - commitsBefore, Math.max(1, run.requests));
      }
      return run;
    });
    const eventsApplied = levels.map(({ webhook, webhookOverBareRps, runs, ...level }) => {
      const sent = runs.webhook.reduce((total, run) => total + run.requests, 0);
      const applied = runs.webhook.reduce((total, run) => total + run.applied, 0);
      return {
        ...level,
        events: webhook,
        eventsOverBare: webhookOverBareRps,
        eventsAppliedShare: ratio(applied, sent),
        // Which events did not move their call: each status's share applied among those answered 200.
        appliedShareByStatus: Object.fromEntries(
          ['ringing', 'in-progress'].map((status) => {
            const counts = runs.webhook.map((run) => run.appliedByStatus[status]!);
            const answered = counts.reduce((total, count) => total + count.answered, 0);
            return [
              status,
              ratio(
                counts.reduce((total, count) => total + count.applied, 0),
                Math.max(1, answered),
              ),
            ];
          }),
        ),
        goalAtLeast: 0.5,
        runs: { bare: runs.bare, events: runs.webhook },
      };
    });
    console.error('(b)', JSON.stringify(eventsApplied.map(({ runs: _runs, ...level }) => level)));
    result.eventsApplied = {
      calls: CALLS,
      callsUsed: nextCall,
      secondsPerRun: SECONDS,
      levels: eventsApplied,
      cpuMsPerRequest: cpuMsPerEvent,
      commitsPerEvent,
    };
    lines.push(
      '## (b) Carrier events applied per second against a bare route of the same app',
      '',
      `POST /telephony/${PROVIDER}/events signed (HMAC-SHA256 over the raw body), each applied to a real call (ringing, then in-progress; ${CALLS} dialing calls made first, ${nextCall} used) against POST /bench/telephony/${PROVIDER}/events behind the same middleware with the same schemas and the same signed bodies, answering only. The app in its own process (bench/intake-events-server.ts), the load in another. ${ROUNDS} alternating rounds of ${SECONDS} s per level after a warm-up of each, medians.`,
      '',
      '| connections | route | requests/s | p50 ms | p99 ms | errors |',
      '|-|-|-|-|-|-|',
      ...eventsApplied.flatMap((level) => [
        `| ${level.connections} | bare route | ${level.bare.rps} | ${level.bare.p50Ms} | ${level.bare.p99Ms} | ${level.bare.errors} |`,
        `| ${level.connections} | events (signed, applied) | ${level.events.rps} | ${level.events.p50Ms} | ${level.events.p99Ms} | ${level.events.errors} |`,
      ]),
      '',
      ...eventsApplied.map(
        (level) =>
          `- ${level.connections} connection(s): ratio **${level.eventsOverBare}x** (goal at least 0.5x); ${(level.eventsAppliedShare * 100).toFixed(1)} % of the events moved their call (by status: ${Object.entries(
            level.appliedShareByStatus,
          )
            .map(([status, share]) => `${status} ${(share * 100).toFixed(1)} %`)
            .join(
              ', ',
            )}; a ringing sent at the same time as its call's in-progress, on another connection, and applied after it, changes nothing).`,
      ),
      `- Transactions committed per event (the last events round, the bench's own few included): ${commitsPerEvent}.`,
      `- CPU ms per request by process (last round of each; "node" the load process): bare route ${JSON.stringify(cpuMsPerEvent.bare)}; events ${JSON.stringify(cpuMsPerEvent.events)}.`,
      '',
    );
    app.stop();
    await sleep(1_500);
  }

  writeBenchResults('intake', result, [
    `# Intake benchmark, issue 28 (${result.measuredAt as string})`,
    '',
    ...(process.env.BENCH_NOTE ? [`**${process.env.BENCH_NOTE}**`, ''] : []),
    `${os.cpus().length} CPUs (${os.cpus()[0]?.model}) shared by PostgreSQL (the test stack's, not durable), the Temporal CLI dev server (in memory), the measured app and the load; Node ${process.version}; load average at the end ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}.`,
    '',
    ...lines,
  ]);
  console.log(JSON.stringify(result, (name, value: unknown) => (name === 'runs' ? undefined : value)));
  await db.$disconnect();
  for (const running of started) running.stop();
} finally {
  await stop();
}
process.exit(0);
