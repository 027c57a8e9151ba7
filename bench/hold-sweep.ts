// `npm run bench:hold-sweep`: what one run of the sweep of abandoned credit holds (lib/credits/abandoned-holds.ts
// settleAbandonedHolds, every worker every 10 minutes) costs, by the work it does and by the work that waits.
//
// - work: BENCH_SWEEP_HOLDS (200) abandoned holds to settle (a reference no settler knows: voided, one ledger entry
//   each), as after a worker died with its operations in flight.
// - waiting: WhatsApp messages still `sent` (phones off, sends marked unknown), each with its pending hold, which the
//   sweep must leave alone until the platform's 30 days are over: BENCH_WAITING_HOLDS levels (0, 10,000, 100,000).
//
// At each level, BENCH_ROUNDS rounds of: one sweep with nothing to settle (the cost of what waits), then one with the
// work to do (the cost of the work, next to it). The level 0 is the baseline of the same run. Also, at each level,
// how many of the first page (500, oldest first) the sweep's query before the waiting holds were passed over would
// have given to waiting holds: a full page of them starved every other hold. Durable PostgreSQL. Writes
// bench/results/hold-sweep.json and .md.
import os from 'node:os';
import { median } from './alternating-rounds';
import { startBenchPostgres } from './bench-postgres';
import { benchMachine, writeBenchResults } from './results-files';
import { settleAbandonedHolds } from '../lib/credits/abandoned-holds';
import { hold } from '../lib/credits/holds';
import { prismaCreditStore, type CreditActor } from '../lib/credits/ledger-store';
import { createDatabase } from '../lib/database';
import { createWorkspace, grantCredits } from '../lib/door/workspace-admin';

const WORK = Number(process.env.BENCH_SWEEP_HOLDS ?? 200);
const LEVELS = (process.env.BENCH_WAITING_HOLDS ?? '0,10000,100000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PAGE = 500;
const actor: CreditActor = { type: 'system', id: 'bench-hold-sweep' };

const medianMs = (values: number[]) => Number(median(values).toFixed(2));

const bench = await startBenchPostgres('bench-hold-sweep-');
try {
  const db = createDatabase(bench.url, { poolSize: 4 });
  const store = prismaCreditStore(db);
  const { id: workspaceId } = await createWorkspace(db, 'Bench hold sweep', {});
  await grantCredits(db, workspaceId, 1_000_000_000);
  const [sender] = await db.$queryRawUnsafe<Array<{ id: string }>>(
    `INSERT INTO "WhatsAppSender" (id, "workspaceId", e164, provider, "phoneNumberId", "businessAccountId")
     VALUES (gen_random_uuid(), $1::uuid, '+14155550100', 'meta-twin', 'bench-number', 'bench-account') RETURNING id::text`,
    workspaceId,
  );
  const [conversation] = await db.$queryRawUnsafe<Array<{ id: string }>>(
    `INSERT INTO "WhatsAppConversation" (id, "workspaceId", "senderId", "contactE164")
     VALUES (gen_random_uuid(), $1::uuid, $2::uuid, '+14155550199') RETURNING id::text`,
    workspaceId,
    sender!.id,
  );

  /** Adds `count` messages still `sent`, each with its pending hold (one statement each, as the API records them). */
  const addWaiting = async (count: number) => {
    if (count <= 0) return;
    await db.$executeRawUnsafe(
      `WITH messages AS (
         INSERT INTO "WhatsAppMessage" (id, "workspaceId", "conversationId", "senderId", direction, type, body, status)
         SELECT gen_random_uuid(), $1::uuid, $2::uuid, $3::uuid, 'outbound', 'template', 'Hi', 'sent'
           FROM generate_series(1, $4::int)
         RETURNING id)
       INSERT INTO "CreditLedgerEntry"
         (id, "workspaceId", kind, amount, status, "heldFor", "referenceType", "referenceId", actor, "actorId", "idempotencyKey")
       SELECT gen_random_uuid(), $1::uuid, 'hold', -0.02, 'pending', 'whatsapp_message', 'whatsapp_message', id::text,
              'system', 'bench-hold-sweep', 'whatsapp_message:' || id
         FROM messages`,
      workspaceId,
      conversation!.id,
      sender!.id,
      count,
    );
    await db.$executeRawUnsafe(`ANALYZE "CreditLedgerEntry"; ANALYZE "WhatsAppMessage"`);
  };
  let abandonedKeys = 0;
  const addAbandoned = async (count: number) => {
    for (let i = 0; i < count; i++)
      await hold(store, {
        workspaceId,
        heldFor: 'recording_analysis',
        amount: '0.0100',
        reference: { type: 'bench_operation', id: `op-${abandonedKeys}` },
        actor,
        idempotencyKey: `bench-abandoned-${abandonedKeys++}`,
      });
  };
  const timedSweep = async () => {
    const started = performance.now();
    // Every hold counts as abandoned: taken before a second from now.
    const settled = await settleAbandonedHolds(store, new Date(Date.now() + 1_000));
    return { ms: performance.now() - started, ...settled };
  };
  /** Of the first page the query selected before it passed over waiting holds (oldest first), how many wait. */
  const waitingInOldPage = async () => {
    const [row] = await db.$queryRawUnsafe<Array<{ waiting: number }>>(
      `SELECT count(*) FILTER (WHERE "referenceType" = 'whatsapp_message')::int AS waiting FROM (
         SELECT "referenceType" FROM "CreditLedgerEntry"
          WHERE status = 'pending' AND kind = 'hold' ORDER BY "createdAt" LIMIT ${PAGE}) page`,
    );
    return row!.waiting;
  };

  // Warm-up: the statements planned and the pool open.
  await addAbandoned(20);
  await timedSweep();

  const levels = [];
  let waiting = 0;
  for (const level of LEVELS) {
    await addWaiting(level - waiting);
    waiting = Math.max(waiting, level);
    const idle: number[] = [];
    const work: number[] = [];
    let settledAll = true;
    let oldPageWaiting = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const nothing = await timedSweep();
      idle.push(nothing.ms);
      settledAll &&= nothing.posted + nothing.voided === 0;
      await addAbandoned(WORK);
      // The old query's page, with the work to do behind the waiting holds.
      if (round === 0) oldPageWaiting = await waitingInOldPage();
      const done = await timedSweep();
      work.push(done.ms);
      settledAll &&= done.voided === WORK;
    }
    const [pending] = await db.$queryRawUnsafe<Array<{ waiting: number; other: number }>>(
      `SELECT count(*) FILTER (WHERE "referenceType" = 'whatsapp_message')::int AS waiting,
              count(*) FILTER (WHERE "referenceType" IS DISTINCT FROM 'whatsapp_message')::int AS other
         FROM "CreditLedgerEntry" WHERE status = 'pending' AND kind = 'hold'`,
    );
    levels.push({
      waiting: level,
      idle,
      work,
      idleMedianMs: medianMs(idle),
      workMedianMs: medianMs(work),
      workPerHoldMs: Number((medianMs(work) / WORK).toFixed(3)),
      settledAll,
      waitingLeftPending: pending!.waiting,
      otherLeftPending: pending!.other,
      oldPageWaiting,
    });
  }
  const [baseline] = levels;
  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    settings: { work: WORK, levels: LEVELS, rounds: ROUNDS, page: PAGE },
    levels: levels.map((level) => ({
      ...level,
      idleOverBaseline: Number((level.idleMedianMs / baseline!.idleMedianMs).toFixed(2)),
      workOverBaseline: Number((level.workMedianMs / baseline!.workMedianMs).toFixed(2)),
    })),
  };
  writeBenchResults('hold-sweep', result, [
    `# Hold sweep benchmark (${result.measuredAt})`,
    '',
    ...(process.env.BENCH_NOTE ? [`**${process.env.BENCH_NOTE}**`, ''] : []),
    `One run of \`settleAbandonedHolds\` with nothing to settle (idle: the cost of what waits) and with ${WORK} abandoned holds to settle (work), next to WhatsApp holds waiting for their message's status (pending, left alone); ${ROUNDS} rounds at each level, medians; the level 0 is the baseline of the same run. Durable PostgreSQL; ${result.machine.cpus} CPUs shared (load average at the end ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}); Node ${process.version}.`,
    '',
    '| waiting holds | idle sweep ms | × baseline | sweep of the work ms | × baseline | ms per hold settled | all settled, waiting left | old query: waiting holds in its first page of 500 |',
    '|-|-|-|-|-|-|-|-|',
    ...result.levels.map(
      (level) =>
        `| ${level.waiting.toLocaleString('en-US')} | ${level.idleMedianMs} | ${level.idleOverBaseline} | ${level.workMedianMs} | ${level.workOverBaseline} | ${level.workPerHoldMs} | ${level.settledAll && level.otherLeftPending === 0 && level.waitingLeftPending === level.waiting ? 'yes' : 'NO'} | ${level.oldPageWaiting} |`,
    ),
    '',
    `- The sweep's page (ABANDONED_HOLDS_SQL) is read from two indexes in its order: the partial index of the pending holds that are not a WhatsApp message's, and the WhatsApp holds past the platform's 30 days only. What waits is not read: the idle column is the price of what waits, paid every 10 minutes by every worker.`,
    `- The old query's first page: with ${PAGE} or more waiting holds older than the work, it held nothing else, and the work was never reached.`,
    '',
  ]);
  console.log(JSON.stringify(result.levels.map(({ idle: _idle, work: _work, ...level }) => level)));
  await db.$disconnect();
} finally {
  await bench.stop();
}
process.exit(0);
