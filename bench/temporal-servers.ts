// `npm run bench:temporal-servers`: the client's workflow start rate (20 starts in flight) on each Temporal server
// the project runs, measured in the same run on the same machine: the CLI's dev server in memory (what the tests
// use), the dev server on a SQLite file (what `npm start` uses), and the production-shaped cluster on PostgreSQL
// (`npm run start:cluster`) with 1 and with 4 history shards. Rounds rotate which server goes first, so a drift of
// the shared machine weighs on all. No worker polls: a start is the server persisting a new workflow.
import { median } from './alternating-rounds';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../scripts/stack/child-process';
import { startEmbeddedPostgres } from '../scripts/stack/postgres';
import { type EmbeddedTemporal } from '../scripts/stack/temporal';
import { requiredPath, startClusterIn, startDevServer } from '../scripts/stack/test-temporal';
import { measure } from './measure';
import { writeBenchResults } from './results-files';

const STARTS = Number(process.env.BENCH_STARTS ?? 1_000);
const CONCURRENCY = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const workDir = mkdtempSync(path.join(os.tmpdir(), 'bench-temporal-servers-'));
chmodSync(workDir, 0o711);
// Temporal's PostgreSQL is crash-safe (fsync on), as in production and in start:cluster.
const postgres = await startEmbeddedPostgres({
  binDir: requiredPath('PG_BIN_DIR'),
  dataDir: path.join(workDir, 'temporal-postgres'),
  port: await freePort(),
  durable: true,
  quiet: true,
});
const cluster = (historyShards: number) =>
  startClusterIn(
    postgres.urlFor('postgres'),
    path.join(workDir, `cluster-${historyShards}`),
    historyShards,
    String(historyShards),
  );
const dev = startDevServer;

const servers: Array<{ name: string; server: EmbeddedTemporal }> = [
  { name: 'dev server, in memory (tests)', server: await dev(null) },
  { name: 'dev server, SQLite file (npm start)', server: await dev(path.join(workDir, 'dev.db')) },
  { name: 'cluster on PostgreSQL, 1 history shard', server: await cluster(1) },
  { name: 'cluster on PostgreSQL, 4 history shards', server: await cluster(4) },
];

try {
  const clients = await Promise.all(
    servers.map(
      async ({ server }) => new Client({ connection: await Connection.connect({ address: server.address }) }),
    ),
  );
  const load = (index: number) => {
    const taskQueue = `bench-${randomUUID()}`;
    return measure(STARTS, CONCURRENCY, async () => {
      await clients[index]!.workflow.start('benchNoopWorkflow', { taskQueue, workflowId: randomUUID() });
    });
  };
  // Warm-up: connections, the namespace caches, the first shard ownership.
  for (let index = 0; index < servers.length; index++) await load(index);
  const runs = servers.map(() => [] as Array<Awaited<ReturnType<typeof load>>>);
  for (let round = 0; round < ROUNDS; round++) {
    for (let step = 0; step < servers.length; step++) {
      const index = (round + step) % servers.length;
      runs[index]!.push(await load(index));
      console.error(`round ${round + 1}, ${servers[index]!.name}: ${JSON.stringify(runs[index]!.at(-1))}`);
    }
  }
  const results = servers.map(({ name }, index) => ({
    server: name,
    startsPerSecond: median(runs[index]!.map((run) => run.perSecond)),
    p50Ms: median(runs[index]!.map((run) => run.p50Ms)),
    p99Ms: median(runs[index]!.map((run) => run.p99Ms)),
    rounds: runs[index],
  }));
  writeBenchResults(
    'temporal-servers',
    { startsPerRound: STARTS, concurrency: CONCURRENCY, rounds: ROUNDS, cpus: os.cpus().length, results },
    [
      '# Workflow starts per second by Temporal server (`npm run bench:temporal-servers`)',
      '',
      `${STARTS} starts per round, ${CONCURRENCY} in flight, ${ROUNDS} rounds rotating the order, medians; ` +
        `${os.cpus().length} CPUs shared with other work. Same run, same machine.`,
      '',
      '| Server | starts/s | p50 ms | p99 ms | rounds (starts/s) |',
      '| --- | ---: | ---: | ---: | --- |',
      ...results.map(
        (result) =>
          `| ${result.server} | ${result.startsPerSecond} | ${result.p50Ms} | ${result.p99Ms} | ${result.rounds!.map((run) => run.perSecond).join(', ')} |`,
      ),
      '',
    ],
  );
  for (const client of clients) await client.connection.close();
} finally {
  for (const { server } of servers) await server.stop();
  await postgres.stop();
  rmSync(workDir, { recursive: true, force: true });
}
