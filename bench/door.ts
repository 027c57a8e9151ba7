// `npm run bench`: what the door (API key check + shared rolling-window rate limit) costs.
// The same Express app and route (GET /v1/whoami) is measured with the real door and with a door that
// only hands over a fixed principal, in the same run, alternating, on a real PostgreSQL. Requests cycle
// through KEYS keys of a workspace on the default limit (120 a minute), so that, as in production, each
// key stays under its limit and every request is admitted: the figure is the cost of an admitted request.
// Writes bench/results/door.json and bench/results/door.md.
import { alternatingRounds, type LoadRun } from './alternating-rounds';
import { benchAppServices } from './bench-app-services';
import { startBenchPostgres } from './bench-postgres';
import { writeBenchResults } from './results-files';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createApp } from '../api/app';
import type { Door } from '../api/http/register-routes';
import type { Principal } from '../api/door/principal';
import { createDatabase } from '../lib/database';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { projectRoot } from '../scripts/stack/paths';

// 1 connection: what one request pays for the door. 10: what the door does to throughput under load.
const CONCURRENCY = (process.env.BENCH_CONNECTIONS ?? '1,10').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const KEYS = Number(process.env.BENCH_KEYS ?? 4000);

const bench = await startBenchPostgres('bench-door-');
const workDir = bench.workDir;
try {
  const db = createDatabase(bench.url, { poolSize: 10 });
  const { id: workspaceId } = await createWorkspace(db, 'Bench', {});
  const { id: memberId } = await addMember(db, workspaceId, 'bench@bench.localhost', 'owner');
  const keys: string[] = [];
  for (let index = 0; index < KEYS; index++)
    keys.push((await createApiKey(db, memberId, { scopes: ['campaigns.view'] })).key);
  const keysFile = path.join(workDir, 'keys.txt');
  writeFileSync(keysFile, keys.join('\n'));
  const keyId = (await db.apiKey.findFirstOrThrow({ where: { memberId } })).id;

  const { services, close } = await benchAppServices(db, bench.url);
  const fixedPrincipal: Principal = {
    keyId,
    workspaceId,
    memberId,
    scoped: true,
    permissions: new Set(['campaigns.view']),
    plan: 'none',
    features: [],
  };
  const bareDoor: Door = (_services, route) =>
    Object.assign(
      (_req: unknown, res: { locals: Record<string, unknown> }, next: () => void) => {
        res.locals.principal = fixedPrincipal;
        next();
      },
      { access: route?.access },
    ) as ReturnType<Door>;

  const listen = (app: ReturnType<typeof createApp>) =>
    new Promise<string>((resolve) => {
      const server = app.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/whoami`),
      );
    });
  const targets = {
    bare: await listen(createApp(services, { door: bareDoor })),
    door: await listen(createApp(services)),
  };

  const load = async (url: string, connections: number): Promise<LoadRun> => {
    // The load generator is a child process: it runs while this process serves, so the call must not block.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'bench/load.ts', url, keysFile, String(connections), String(SECONDS)],
      { cwd: projectRoot },
    );
    return JSON.parse(stdout) as LoadRun;
  };
  const levels = [];
  for (const connections of CONCURRENCY) {
    const { runs, summary } = await alternatingRounds(
      ['bare', 'door'] as const,
      ROUNDS,
      (variant) => load(targets[variant], connections),
      `${connections} conn`,
    );
    const bare = summary('bare');
    const door = summary('door');
    levels.push({
      connections,
      bare,
      door,
      doorCostP50Ms: Number((door.p50Ms - bare.p50Ms).toFixed(3)),
      throughputKept: Number((door.rps / bare.rps).toFixed(3)),
      runs,
    });
  }

  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
    setup: { endpoint: 'GET /v1/whoami', secondsPerRun: SECONDS, rounds: ROUNDS, keys: KEYS, limitPerKey: 120 },
    goals: { doorCostP50UnderMs: 1, throughputKeptAtLeast: 0.7 },
    levels,
  };
  writeBenchResults('door', result, [
    `# Door benchmark (${result.measuredAt})`,
    '',
    `GET /v1/whoami with the real door (key check and PostgreSQL sliding log, one SQL call) against the same app with a door that hands over a fixed principal. ${KEYS} keys at the default limit (120/min each); ${ROUNDS} alternating rounds of ${SECONDS} s per level; ${result.machine.cpus} CPUs shared by server, PostgreSQL and load generator; Node ${process.version}. Medians.`,
    '',
    '| connections | variant | requests/s | p50 ms | p99 ms |',
    '|-|-|-|-|-|',
    ...levels.flatMap((level) => [
      `| ${level.connections} | no auth, no limiter | ${level.bare.rps} | ${level.bare.p50Ms} | ${level.bare.p99Ms} |`,
      `| ${level.connections} | door | ${level.door.rps} | ${level.door.p50Ms} | ${level.door.p99Ms} |`,
    ]),
    '',
    ...levels.map(
      (level) =>
        `- ${level.connections} connection(s): door cost at p50 ${level.doorCostP50Ms} ms (goal < 1 ms); throughput kept ${(level.throughputKept * 100).toFixed(1)} % (goal >= 70 %).`,
    ),
    '',
  ]);
  console.log(JSON.stringify(levels.map(({ runs: _runs, ...level }) => level)));
  await db.$disconnect();
  await close();
} finally {
  await bench.stop();
}
process.exit(0);
