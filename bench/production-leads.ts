// The production path of one-call leads, for the benches that weigh it (bench/stack-traces.ts,
// bench/bare-ladder.ts): the API, the worker and the simulated carrier each in its own process, as deployed,
// leads pushed through POST /v1/campaigns/{id}/leads/batch onto a RUNNING campaign with a line per lead and a
// single-attempt ladder, every number answered and talking briefly. Only the API push starts work, so this
// measures whatever workflow type the API starts for a lead (the dial ladder is being replaced, issue 28).
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { createJsonPoster } from './http-post';
import { BENCH_LADDER, pushLeads } from './ladder-campaign';
import { apiHealthy, nodeArgsFromEnv, startBenchCarrier, startBenchProcess, type BenchProcess } from './bench-process';
import { cpuNow, cpuSecondsBetween, descendsFrom } from './measure';
import { createDatabase, type Database } from '../lib/database';
import { ensureTwilioTwinConnection } from '../lib/carriers/twin';
import { keyringSchema, newKeyringEntry } from '../lib/secrets/keyring';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { freePort } from '../scripts/stack/child-process';

/** Last digit 0: answered by a human; second-to-last 0: talks the shortest, 30 s (simulators/simulated-carrier/timeline.ts). */
export const ANSWERED_PHONE = '+14155550100';
/** Busy at once on the simulated carrier: a call with no aftermath (no call intelligence), the bare ladder's shape. */
export const BUSY_PHONE_NO_AFTERMATH = '+14155550105';
/** 0.01: an answered call rings 50 ms and talks 300 ms, so a lead's work, not its wait, dominates the run. */
export const TIME_SCALE = 0.01;

/**
 * CPU seconds (user + system) so far of the threads of `pid` named `name` (Linux /proc/<pid>/task). The SDK runs
 * workflows in a Node worker thread, which Linux names "WorkerThread"; the rest of the worker (activities,
 * the SDK's core, the event loop) runs on other threads.
 */
export function threadCpuSeconds(pid: number, name = 'WorkerThread'): number {
  let seconds = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim() !== name) continue;
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      seconds += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return seconds;
}

/** Groups a CPU snapshot's processes: the named measured ones, the stack's PostgreSQL and Temporal server, the bench. */
export function groupOf(measured: Record<string, number>, after: ReturnType<typeof cpuNow>) {
  return (pid: number, name: string): string => {
    if (pid === process.pid) return 'bench (load, polling)';
    const own = Object.entries(measured).find(([, measuredPid]) => measuredPid === pid)?.[0];
    if (own) return own;
    if (!descendsFrom(after, pid, process.pid)) return 'other';
    if (name.startsWith('postgres')) return isTemporalsPostgres(after, pid) ? "Temporal's PostgreSQL" : 'PostgreSQL';
    // The stack's Temporal: the CLI's dev server (`temporal`) or the cluster's server binary and its UI.
    if (!name.startsWith('node') && !name.startsWith('npm') && !name.startsWith('sh')) return 'Temporal server';
    return 'other';
  };
}

/**
 * Whether a postgres process belongs to the cluster's own PostgreSQL (scripts/stack/ephemeral-stack.ts keeps it in
 * <workDir>/temporal-postgres), not the app's: on the production-shaped cluster, Temporal's persistence is
 * PostgreSQL, and its CPU is the Temporal server's cost.
 */
function isTemporalsPostgres(processes: ReturnType<typeof cpuNow>, pid: number): boolean {
  let top = pid;
  for (let steps = 0; steps < 8; steps++) {
    const parent = processes.get(top)?.parent;
    if (!parent || !processes.get(parent)?.name.startsWith('postgres')) break;
    top = parent;
  }
  try {
    return readFileSync(`/proc/${top}/cmdline`, 'utf8').includes('temporal-postgres');
  } catch {
    return false;
  }
}

/**
 * cpuSecondsBetween, plus the PostgreSQL backends that ended within the interval: a pool closes idle connections,
 * and a backend's CPU would leave the snapshot with it. A postmaster's exited-children time holds the whole life of
 * each backend it reaped; less what those alive at `before` had used by then, it is what they used within.
 */
export function cpuSecondsWithEndedBackends(
  before: ReturnType<typeof cpuNow>,
  after: ReturnType<typeof cpuNow>,
  group: (pid: number, name: string) => string,
): Record<string, number> {
  const groups = cpuSecondsBetween(before, after, group);
  for (const [pid, { name, parent, exitedChildrenSeconds }] of after) {
    if (!name.startsWith('postgres') || after.get(parent)?.name.startsWith('postgres')) continue;
    let usedBefore = 0;
    for (const [childPid, child] of before)
      if (child.parent === pid && !after.has(childPid)) usedBefore += child.seconds;
    const used = exitedChildrenSeconds - (before.get(pid)?.exitedChildrenSeconds ?? 0) - usedBefore;
    if (used <= 0) continue;
    const named = group(pid, name);
    groups[named] = Number(((groups[named] ?? 0) + used).toFixed(2));
  }
  return groups;
}

/** The carrier a round's calls go through: the simulated carrier, or the Twilio twin by a connection. */
export type BenchCarrierPath = 'simulated' | 'twilio-twin';

/** The caller number the Twilio-twin rounds dial from, bound to the workspace's twilio-twin connection. */
const TWIN_CALLER_NUMBER = '+14155550999';

export interface ProductionSide {
  db: Database;
  databaseUrl: string;
  taskQueue: string;
  api: BenchProcess;
  carrier: BenchProcess;
  /** The Twilio twin, when the side was started with `twilioTwin`. */
  twilioTwin?: BenchProcess;
  /** The worker running now (replaced by restartWorker). */
  worker: BenchProcess;
  /** Stops the worker and starts another on the same task queue with these node flags and environment. */
  restartWorker(nodeArgs: string[], env?: Record<string, string>): Promise<BenchProcess>;
  /**
   * Pushes `leads` one-call leads into a new campaign and waits until every one has finished and no workflow on
   * the task queue runs any more: what a lead sets off after its own end (its call's intelligence) is its cost
   * too, and must not spill into the next measurement.
   */
  runLeads(leads: number, options?: RunOptions): Promise<ProductionRun>;
  stop(): Promise<void>;
}

export interface RunOptions {
  /** Default simulated; twilio-twin needs the side started with `twilioTwin`. */
  carrier?: BenchCarrierPath;
  /** The campaign's ladder; default a single attempt with the benches' outcome rules. */
  dialLadder?: { rungs: Array<{ delaySeconds: number }>; outcomes: Record<string, string> };
}

export interface ProductionRun {
  campaignId: string;
  leads: number;
  /** From the first push until no workflow on the task queue runs. */
  seconds: number;
  /** From the first push until the last lead finished. */
  leadsFinishedSeconds: number;
  /** CPU seconds by process group from the first push to the last lead finished. */
  cpuSeconds: Record<string, number>;
  /** CPU seconds of the worker's workflow thread(s) over the same interval. */
  workflowThreadCpuSeconds: number;
  /** The workflow ids the API gave the leads (Lead.workflowId). */
  leadWorkflowIds: string[];
}

/** The API, a worker and the simulated carrier on `databaseUrl` (a migrated database) and the stack's Temporal. */
export async function startProductionSide(setup: {
  databaseUrl: string;
  temporalAddress: string;
  bundlePath: string;
  workerNodeArgs?: string[];
  /** Node flags of the API process (a profiler). */
  apiNodeArgs?: string[];
  workerEnv?: Record<string, string>;
  scratchDir?: string;
  /** The number every lead has; default ANSWERED_PHONE. */
  phone?: string;
  /**
   * Also run the Twilio twin (simulators/twilio-twin/) as its own process at the same time scale, with a twilio-twin
   * carrier connection and a caller number bound to it, for rounds run with `carrier: 'twilio-twin'`.
   */
  twilioTwin?: boolean;
}): Promise<ProductionSide> {
  const signingSecret = `bench-${randomUUID()}`;
  const db = createDatabase(setup.databaseUrl, { poolSize: 4 });
  const { id: workspaceId } = await createWorkspace(db, 'Bench', { rateLimitPerMinute: 100_000_000 });
  const { key } = await createApiKey(db, (await addMember(db, workspaceId, 'bench@bench.localhost', 'owner')).id, {
    scopes: ['campaigns.edit'],
  });
  const taskQueue = `bench-production-${randomUUID()}`;
  const { carrier, url: carrierUrl } = await startBenchCarrier(setup.databaseUrl, signingSecret, TIME_SCALE);
  const apiPort = await freePort();
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const keyring = setup.twilioTwin ? newKeyringEntry('bench') : undefined;
  const common = {
    ...(keyring ? { SECRETS_KEYS: keyring, PUBLIC_BASE_URL: apiUrl } : {}),
    DATABASE_URL: setup.databaseUrl,
    TEMPORAL_ADDRESS: setup.temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    SIMULATED_CARRIER_URL: carrierUrl,
    SIMULATED_CARRIER_SIGNING_SECRET: signingSecret,
    TELEPHONY_CALLBACK_BASE_URL: apiUrl,
    // No metrics endpoints: several benches' processes may run at once, and a scrape is no lead's work.
    METRICS_PORT: 'off',
    WORKER_METRICS_PORT: 'off',
    WORKER_SDK_METRICS_PORT: 'off',
  };
  const temporalConnection = await Connection.connect({ address: setup.temporalAddress });
  const temporal = new Client({ connection: temporalConnection });
  const running = `TaskQueue = "${taskQueue}" AND ExecutionStatus = "Running"`;
  const api = startBenchProcess(
    'api/main.ts',
    {
      ...common,
      PORT: String(apiPort),
      EXPORT_DIR: path.join(setup.scratchDir ?? os.tmpdir(), 'bench-exports'),
    },
    setup.apiNodeArgs,
  );
  let liveWorker: BenchProcess | undefined;
  const startWorker = async (nodeArgs: string[], env: Record<string, string>) => {
    const started = (liveWorker = startBenchProcess(
      'worker/main.ts',
      { ...common, WORKFLOW_BUNDLE_PATH: setup.bundlePath, ...env },
      nodeArgs,
    ));
    await started.printed('worker polling');
    return started;
  };
  let twilioTwin: BenchProcess | undefined;
  if (keyring) {
    const twinPort = await freePort();
    twilioTwin = startBenchProcess(
      'simulators/twilio-twin/main.ts',
      {
        DATABASE_URL: setup.databaseUrl,
        TWILIO_TWIN_HOST: '127.0.0.1',
        TWILIO_TWIN_PORT: String(twinPort),
        TWILIO_TWIN_TIME_SCALE: String(TIME_SCALE),
      },
      nodeArgsFromEnv('BENCH_TWIN_NODE_ARGS'),
    );
    await twilioTwin.printed('twilio twin listening');
    await db.phoneNumber.create({
      data: {
        workspaceId,
        e164: TWIN_CALLER_NUMBER,
        country: 'US',
        region: '',
        capabilities: { voice: true, whatsapp: false },
      },
    });
    await ensureTwilioTwinConnection(db, keyringSchema.parse(keyring), workspaceId, `http://127.0.0.1:${twinPort}`);
  }
  // A bench that fails leaves none of its processes behind.
  process.once('exit', () => [liveWorker, api, carrier, twilioTwin].forEach((each) => each?.stop()));
  await apiHealthy(apiUrl);
  const side: ProductionSide = {
    db,
    databaseUrl: setup.databaseUrl,
    taskQueue,
    api,
    carrier,
    twilioTwin,
    worker: await startWorker(setup.workerNodeArgs ?? [], setup.workerEnv ?? {}),
    async restartWorker(nodeArgs, env = {}) {
      side.worker.stop();
      await waitForExit(side.worker.pid);
      side.worker = await startWorker(nodeArgs, env);
      return side.worker;
    },
    async runLeads(leads, { carrier: path = 'simulated', dialLadder } = {}) {
      if (path === 'twilio-twin' && !twilioTwin) throw new Error('the side was started without the Twilio twin');
      const client = createJsonPoster(apiUrl, { authorization: `Bearer ${key}` }, 4);
      const post = async (pathname: string, body: unknown, expected: number) => {
        const response = await client.post(pathname, body);
        if (response.status !== expected) throw new Error(`${pathname}: ${response.status} ${response.text}`);
      };
      const campaign = await db.campaign.create({
        data: {
          workspaceId,
          name: 'Bench one-call leads',
          acceptsLeadPush: true,
          status: 'RUNNING',
          dialLadder: dialLadder ?? { rungs: [{ delaySeconds: 0 }], outcomes: BENCH_LADDER.outcomes },
          callerNumbers: path === 'twilio-twin' ? [TWIN_CALLER_NUMBER] : [],
          callingWindow: { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] },
          // One line per lead: no lead waits for another's call to end.
          maxConcurrentCalls: leads,
        },
      });
      const measured = {
        worker: side.worker.pid,
        API: api.pid,
        ...(path === 'twilio-twin' ? { 'Twilio twin': twilioTwin!.pid } : { 'simulated carrier': carrier.pid }),
      };
      const cpuBefore = cpuNow();
      const threadBefore = threadCpuSeconds(side.worker.pid);
      const started = performance.now();
      await pushLeads(post, campaign.id, leads, () => ({
        lead: { phone: setup.phone ?? ANSWERED_PHONE },
        idempotencyKey: randomUUID(),
      }));
      for (let finished = 0, polls = 0; finished < leads; polls++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        finished = await db.lead.count({
          where: { campaignId: campaign.id, status: { in: ['completed', 'failed', 'cancelled'] } },
        });
        if (polls % 120 === 119) console.error(`  ${finished} of ${leads} leads finished`);
      }
      const leadsFinishedSeconds = (performance.now() - started) / 1000;
      while ((await temporal.workflow.count(running)).count > 0)
        await new Promise((resolve) => setTimeout(resolve, 250));
      const seconds = (performance.now() - started) / 1000;
      const workflowThreadCpuSeconds = threadCpuSeconds(side.worker.pid) - threadBefore;
      const cpuAfter = cpuNow();
      const cpuSeconds = cpuSecondsWithEndedBackends(cpuBefore, cpuAfter, groupOf(measured, cpuAfter));
      delete cpuSeconds.other;
      client.close();
      const rows = await db.lead.findMany({ where: { campaignId: campaign.id }, select: { workflowId: true } });
      return {
        campaignId: campaign.id,
        leads,
        seconds: Number(seconds.toFixed(2)),
        leadsFinishedSeconds: Number(leadsFinishedSeconds.toFixed(2)),
        cpuSeconds,
        workflowThreadCpuSeconds: Number(workflowThreadCpuSeconds.toFixed(2)),
        leadWorkflowIds: rows.map((row) => row.workflowId),
      };
    },
    async stop() {
      const processes = [side.worker, api, carrier, ...(twilioTwin ? [twilioTwin] : [])];
      for (const each of processes) each.stop();
      await Promise.all(processes.map((each) => waitForExit(each.pid)));
      await db.$disconnect();
      await temporalConnection.close();
    },
  };
  return side;
}

/** Resolves once the process is gone (its /proc entry removed), so that the next one starts on a quiet machine. */
export async function waitForExit(pid: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`process ${pid} did not exit within ${timeoutMs} ms`);
}
