// `npm run bench:credits`: debits per second on ONE workspace under BENCH_WRITERS (20) concurrent writers,
// next to a bare `UPDATE "Workspace" SET "creditBalance" = "creditBalance" - x WHERE id = w RETURNING` of the
// same row, in the same run, alternating rounds (bench/alternating-rounds.ts), on a durable PostgreSQL.
//
// - bare: the one conditional statement alone, autocommitted, on a pg pool of BENCH_WRITERS connections.
// - debit (pg): lib/credits debit() over the same pool (poolCreditStore): one autocommitted call of
//   credit_apply_entry (the ledger entry inserted ON CONFLICT DO NOTHING, then the conditional UPDATE of the
//   balance and the entry's balanceAfter), then the entry read back.
// - debit (prisma): the same debit() over Prisma (prismaCreditStore), as the API and the workers run it.
// Every debit has a key of its own (no duplicates) and takes 0.0001 from a balance that never runs out.
// The goal (issue 15): a debit keeps at least 50 % of the bare update's throughput. Writes
// bench/results/credits.json and .md.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { alternatingRounds, type LoadRun } from './alternating-rounds';
import { startBenchPostgres } from './bench-postgres';
import { benchMachine, writeBenchResults } from './results-files';
import { debit } from '../lib/credits/debit';
import { poolCreditStore, prismaCreditStore, type CreditStore } from '../lib/credits/ledger-store';
import { createDatabase } from '../lib/database';
import { createSqlPool } from '../lib/sql-pool';
import { addMember, createWorkspace, grantCredits } from '../lib/door/workspace-admin';

const WRITERS = Number(process.env.BENCH_WRITERS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const AMOUNT = '0.0001';

const percentile = (sorted: number[], share: number) =>
  Number((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? 0).toFixed(3));

/** `writers` loops running `operation` back to back for SECONDS; throughput and latency. */
async function closedLoop(writers: number, operation: () => Promise<unknown>): Promise<LoadRun> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (performance.now() < deadline) {
        const begin = performance.now();
        try {
          await operation();
          latencies.push(performance.now() - begin);
        } catch (error) {
          errors++;
          if (errors === 1) console.error('first error:', (error as Error).message);
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    rps: Math.round(latencies.length / elapsed),
    p50Ms: percentile(latencies, 0.5),
    p90Ms: percentile(latencies, 0.9),
    p99Ms: percentile(latencies, 0.99),
  };
}

const bench = await startBenchPostgres('bench-credits-');
try {
  const db = createDatabase(bench.url, { poolSize: WRITERS });
  const pool = createSqlPool(bench.url, WRITERS);
  const { id: workspaceId } = await createWorkspace(db, 'Bench credits', {});
  await addMember(db, workspaceId, 'bench@bench.localhost', 'owner');
  await grantCredits(db, workspaceId, 1_000_000_000);

  let bareUpdates = 0; // warm-up runs included: every one moved the balance
  const bareUpdate = async () => {
    await pool.query(
      `UPDATE "Workspace" SET "creditBalance" = "creditBalance" - $2::numeric
       WHERE id = $1::uuid AND "creditBalance" >= $2::numeric RETURNING "creditBalance"::text`,
      [workspaceId, AMOUNT],
    );
    bareUpdates++;
  };
  const debitThrough = (store: CreditStore) => () =>
    debit(store, {
      workspaceId,
      kind: 'recording_analysis',
      amount: AMOUNT,
      reference: { type: 'bench', id: randomUUID() },
      actor: { type: 'system', id: 'bench' },
      idempotencyKey: randomUUID(),
    });
  const stores = { pg: poolCreditStore(pool), prisma: prismaCreditStore(db) } as const;

  const comparisons = [];
  for (const through of ['pg', 'prisma'] as const) {
    const operation = { bare: bareUpdate, debit: debitThrough(stores[through]) };
    const { runs, summary } = await alternatingRounds(
      ['bare', 'debit'] as const,
      ROUNDS,
      (variant) => closedLoop(WRITERS, operation[variant]),
      `debit through ${through}`,
    );
    const bare = summary('bare');
    const debits = summary('debit');
    comparisons.push({
      through,
      bare,
      debit: debits,
      debitOverBareRps: Number((debits.rps / bare.rps).toFixed(3)),
      runs,
    });
  }

  // The ledger sums to the balance after everything (the bare updates moved the balance without an
  // entry: they are counted apart).
  const [check] = await db.$queryRaw<Array<{ balance: string; ledger: string; entries: bigint }>>`
    SELECT w."creditBalance"::text AS balance, sum(e.amount)::text AS ledger, count(*) AS entries
    FROM "Workspace" w JOIN "CreditLedgerEntry" e ON e."workspaceId" = w.id WHERE w.id = ${workspaceId}::uuid
    GROUP BY w.id`;
  const consistency = {
    balance: check!.balance,
    ledgerSum: check!.ledger,
    entries: Number(check!.entries),
    bareUpdates,
    ledgerSumMinusBareUpdatesEqualsBalance:
      Math.round((Number(check!.ledger) - bareUpdates * Number(AMOUNT)) * 10_000) ===
      Math.round(Number(check!.balance) * 10_000),
  };
  console.error('consistency', consistency);

  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: {
      writers: WRITERS,
      secondsPerRun: SECONDS,
      rounds: ROUNDS,
      amount: AMOUNT,
      bare: 'UPDATE "Workspace" SET "creditBalance" = "creditBalance" - $x WHERE id = $w AND "creditBalance" >= $x RETURNING "creditBalance" (autocommit, pg pool)',
      debit:
        'lib/credits debit(): one autocommitted SELECT credit_apply_entry(...) (INSERT ledger entry ON CONFLICT DO NOTHING; conditional UPDATE of the balance; balanceAfter written), then the entry read back',
      goal: 'debit keeps at least 50 % of the bare update throughput',
    },
    comparisons,
    consistency,
  };
  writeBenchResults('credits', result, [
    `# Credit debits benchmark (${result.measuredAt})`,
    '',
    ...(process.env.BENCH_NOTE ? [`**${process.env.BENCH_NOTE}**`, ''] : []),
    `Debits per second on one workspace (every writer on the same Workspace row) under ${WRITERS} concurrent writers, against a bare conditional \`UPDATE ... RETURNING\` of the same row, alternating rounds of ${SECONDS} s (${ROUNDS} rounds after a warm-up of each); durable PostgreSQL (fsync at every commit); ${result.machine.cpus} CPUs shared (load average at the end ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}); Node ${process.version}. Medians. Goal: a debit keeps at least 50 % of the bare update.`,
    '',
    '| debit through | variant | per second | p50 ms | p99 ms | errors |',
    '|-|-|-|-|-|-|',
    ...comparisons.flatMap((comparison) => [
      `| ${comparison.through} | bare UPDATE ... RETURNING | ${comparison.bare.rps} | ${comparison.bare.p50Ms} | ${comparison.bare.p99Ms} | ${comparison.bare.errors} |`,
      `| ${comparison.through} | debit (ledger entry + balance) | ${comparison.debit.rps} | ${comparison.debit.p50Ms} | ${comparison.debit.p99Ms} | ${comparison.debit.errors} |`,
    ]),
    '',
    ...comparisons.map(
      (comparison) =>
        `- Through ${comparison.through}: a debit keeps ${(comparison.debitOverBareRps * 100).toFixed(1)} % of the bare update's throughput (ratio ${comparison.debitOverBareRps}; goal 0.5: ${comparison.debitOverBareRps >= 0.5 ? 'met' : 'NOT met'}).`,
    ),
    `- After the run: ${consistency.entries} ledger entries; the ledger minus the ${bareUpdates} bare updates (which write no entry) ${consistency.ledgerSumMinusBareUpdatesEqualsBalance ? 'equals' : 'DOES NOT equal'} the balance ${consistency.balance}.`,
    SECONDS < 8 || ROUNDS < 3
      ? '- A small-scale run on a shared machine (fewer or shorter rounds than the defaults); for the full figures run it on a quiet machine with the defaults (docs/benchmarks.md).'
      : '',
    '',
  ]);
  console.log(JSON.stringify(comparisons.map(({ runs: _runs, ...comparison }) => comparison)));
  await pool.end();
  await db.$disconnect();
} finally {
  await bench.stop();
}
process.exit(0);
