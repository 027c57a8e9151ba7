// `npm run bench:whatsapp-webhooks`: the intake of the WhatsApp provider's status webhooks, POST
// /whatsapp/webhook, with the X-Hub-Signature-256 signature checked and the status applied to a real
// WhatsAppMessage (its hold posted on delivered), next to a bare route of the same app, alternating
// rounds (bench/alternating-rounds.ts), on a real durable PostgreSQL, with the load generated in its own
// process (bench/load-whatsapp-statuses.ts), which signs every body as the provider does.
//
// - webhook: BENCH_MESSAGES outbound template messages are made first as a send leaves them once handed
//   to the provider (status accepted, the provider's wamid recorded, the price held). Each connection
//   takes the next unused message and reports it sent, delivered, then read, one Meta-shaped body per
//   status (as the simulated provider posts them), each after the previous one's answer: every status
//   moves its message, the delivered one posts the hold. Every run takes messages no run used before.
// - bare: POST /bench/whatsapp/webhook, the same body schema and response schema, registered through the
//   same registerRoutes (raw body kept, zod body validation, JSON answer) in the same Express app ahead of
//   the real routes, answering { received: true, applied: 0, ignored: 0 } with no signature check and no
//   database. The same signed bodies are sent to it.
// - In process: the cost of one verifyWhatsAppSignature (and one signWhatsAppWebhook) on a typical body.
// After the runs: every status sent to the webhook answered applied, recorded once and moved its message
// once; every hold as its message's status says; the ledger sums to the balance.
// No Temporal: the seeded messages belong to no campaign's lead, so no workflow is told of them.
// Writes bench/results/whatsapp-webhooks.json and .md.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { type LoadRun, webhookAgainstBare } from './alternating-rounds';
import { benchAppServices } from './bench-app-services';
import { runLoadProcess } from './load-process';
import { startBenchPostgres } from './bench-postgres';
import { microsecondsPer } from './measure';
import { benchMachine, writeBenchResults } from './results-files';
import { whatsAppLedgerCheck } from './whatsapp-ledger';
import { statusWebhook } from './whatsapp-status-webhook';
import { createApp } from '../api/app';
import { registerRoutes } from '../api/http/register-routes';
import { defineRoute } from '../api/http/route';
import { whatsAppWebhookRoutes } from '../api/whatsapp/webhook-routes';
import { receiveWhatsAppWebhook } from '../api/whatsapp/whatsapp-webhook';
import { holdWhatsAppMessage } from '../lib/credits/whatsapp-billing';
import { createDatabase } from '../lib/database';
import { poolSql } from '../lib/run-sql';
import { connectWhatsAppSender } from '../lib/whatsapp/senders';
import {
  signWhatsAppWebhook,
  verifyWhatsAppSignature,
  WHATSAPP_SIGNATURE_HEADER,
  whatsAppWebhookSchema,
} from '../lib/whatsapp/webhook';
import { addMember, createWorkspace, grantCredits } from '../lib/door/workspace-admin';

const CONCURRENCY = (process.env.BENCH_CONNECTIONS ?? '1,10').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 30_000);
const VERIFICATIONS = Number(process.env.BENCH_VERIFICATIONS ?? 100_000);
const APP_SECRET = `bench-${randomUUID()}`;
const SEED_CONCURRENCY = 10;
const APPLIED_IN_PROCESS = Number(process.env.BENCH_APPLIED_IN_PROCESS ?? 300);

const bench = await startBenchPostgres('bench-whatsapp-webhooks-');
try {
  const db = createDatabase(bench.url, { poolSize: 10 });
  const { id: workspaceId } = await createWorkspace(db, 'Bench', {});
  await addMember(db, workspaceId, 'bench@bench.localhost', 'owner');
  await grantCredits(db, workspaceId, 1_000_000);
  const { id: senderId } = await connectWhatsAppSender(db, {
    workspaceId,
    e164: '+14155550100',
    provider: 'simulated',
  });
  const sender = await db.whatsAppSender.findUniqueOrThrow({ where: { id: senderId } });

  // 1. Messages as a send leaves them once handed over: one per contact, accepted, the wamid known, held.
  await db.$executeRawUnsafe(
    `INSERT INTO "WhatsAppConversation" (id, "workspaceId", "senderId", "contactE164", "lastMessageAt", "createdAt")
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, '+1415' || lpad(n::text, 7, '0'), now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC'
       FROM generate_series(1, $3::int) AS n`,
    workspaceId,
    senderId,
    MESSAGES,
  );
  await db.$executeRawUnsafe(
    `INSERT INTO "WhatsAppMessage" (id, "workspaceId", "conversationId", "senderId", direction, type, category, body, status, "providerMessageId", "createdAt")
     SELECT gen_random_uuid(), c."workspaceId", c.id, c."senderId", 'outbound', 'template', 'utility', 'Your order ships today.',
            'accepted', 'wamid.bench' || md5(c.id::text), now() AT TIME ZONE 'UTC'
       FROM "WhatsAppConversation" c WHERE c."senderId" = $1::uuid`,
    senderId,
  );
  const rows = await db.$queryRawUnsafe<Array<{ id: string; wamid: string; recipient: string }>>(
    `SELECT m.id::text, m."providerMessageId" AS wamid, substr(c."contactE164", 2) AS recipient
       FROM "WhatsAppMessage" m JOIN "WhatsAppConversation" c ON c.id = m."conversationId"
      WHERE m."senderId" = $1::uuid ORDER BY c."contactE164"`,
    senderId,
  );
  const { services, close } = await benchAppServices(db, bench.url, { whatsapp: { appSecret: APP_SECRET } });
  const sql = poolSql(services.sql);
  const actor = { type: 'system', id: 'bench' } as const;
  for (let next = 0; next < rows.length;) {
    await Promise.all(
      rows
        .slice(next, (next += SEED_CONCURRENCY * 20))
        .map((row) => holdWhatsAppMessage(sql, { workspaceId, messageId: row.id, category: 'utility' }, actor)),
    );
  }
  const messagesFile = path.join(bench.workDir, 'messages.json');
  writeFileSync(
    messagesFile,
    JSON.stringify({
      phoneNumberId: sender.phoneNumberId,
      businessAccountId: sender.businessAccountId,
      messages: rows.map((row) => [row.wamid, row.recipient]),
    }),
  );
  console.error(`${rows.length} messages made and held`);

  // 2. The signature alone, in this process, on a body as the load sends it.
  const sampleBody = Buffer.from(JSON.stringify(statusWebhook(sender, rows[0]!, 'delivered')));
  const header = signWhatsAppWebhook(sampleBody, APP_SECRET);
  if (!verifyWhatsAppSignature(sampleBody, header, APP_SECRET)) throw new Error('the sample signature does not verify');
  const signature = {
    bodyBytes: sampleBody.length,
    verifyUs: microsecondsPer(VERIFICATIONS, () => verifyWhatsAppSignature(sampleBody, header, APP_SECRET)),
    signUs: microsecondsPer(VERIFICATIONS, () => signWhatsAppWebhook(sampleBody, APP_SECRET)),
  };
  console.error('signature', signature);

  // 3. One app: the real routes, and the bare route registered the same way ahead of them.
  const webhookRoute = whatsAppWebhookRoutes.find((route) => route.method === 'post')!;
  const bareRoute = defineRoute({
    method: 'post',
    path: '/bench/whatsapp/webhook',
    access: { public: true },
    summary: 'Bench only: the webhook route without signature check and database.',
    body: whatsAppWebhookSchema,
    responses: webhookRoute.responses,
    handler: async () => ({ status: 200, body: { received: true as const, applied: 0, ignored: 0 } }),
  });
  const app = express();
  registerRoutes(app, [bareRoute], services);
  app.use(createApp(services));
  const baseUrl = await new Promise<string>((resolve) => {
    const server = app.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    );
  });
  const targets = { bare: `${baseUrl}/bench/whatsapp/webhook`, webhook: `${baseUrl}/whatsapp/webhook` };

  type Run = LoadRun & { applied: number; messagesUsed: number; statusesSent: number };
  let nextMessage = 0;
  let statusesToWebhook = 0;
  let appliedByWebhook = 0;
  const load = async (variant: 'bare' | 'webhook', connections: number): Promise<Run> => {
    const first = variant === 'webhook' ? nextMessage : 0;
    const run = await runLoadProcess<Run>(
      'bench/load-whatsapp-statuses.ts',
      [targets[variant], messagesFile, String(first), String(connections), String(SECONDS)],
      { BENCH_WHATSAPP_APP_SECRET: APP_SECRET },
    );
    if (variant === 'webhook') {
      nextMessage += run.messagesUsed;
      statusesToWebhook += run.statusesSent;
      appliedByWebhook += run.applied;
    }
    return run;
  };
  const levels = await webhookAgainstBare(CONCURRENCY, ROUNDS, load);

  // 4. The same statuses applied in this process, one at a time, without HTTP, signature or validation:
  // what the service's statements alone cost (sent; delivered, which posts the hold; read).
  const inProcessMs: Record<string, number[]> = { sent: [], delivered: [], read: [] };
  for (let index = 0; index < APPLIED_IN_PROCESS && nextMessage < rows.length; index++) {
    const message = rows[nextMessage++]!;
    for (const status of ['sent', 'delivered', 'read']) {
      const begin = performance.now();
      const outcome = await receiveWhatsAppWebhook(
        services,
        whatsAppWebhookSchema.parse(statusWebhook(sender, message, status)),
      );
      inProcessMs[status]!.push(performance.now() - begin);
      statusesToWebhook++;
      appliedByWebhook += outcome.applied;
    }
  }
  const applyInProcess = Object.fromEntries(
    Object.entries(inProcessMs).map(([status, values]) => {
      values.sort((a, b) => a - b);
      const at = (share: number) =>
        Number(values[Math.min(values.length - 1, Math.floor(values.length * share))]!.toFixed(3));
      return [status, { statuses: values.length, p50Ms: at(0.5), p99Ms: at(0.99) }];
    }),
  );
  console.error('receiveWhatsAppWebhook in process', JSON.stringify(applyInProcess));

  // 5. Every status applied once: answered applied, recorded once, and each moved its message one step.
  const [applied] = await db.$queryRawUnsafe<
    Array<{ eventsRecorded: number; stepsMoved: number; messagesRead: number }>
  >(
    `SELECT (SELECT count(*) FROM "WhatsAppWebhookEvent" WHERE "eventKey" LIKE 'status:%')::int AS "eventsRecorded",
            (SELECT coalesce(sum(CASE status::text WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 WHEN 'read' THEN 3 ELSE 0 END), 0)
               FROM "WhatsAppMessage" WHERE "senderId" = $1::uuid)::int AS "stepsMoved",
            (SELECT count(*) FROM "WhatsAppMessage" WHERE "senderId" = $1::uuid AND status = 'read')::int AS "messagesRead"`,
    senderId,
  );
  const ledger = await whatsAppLedgerCheck(db, workspaceId);
  const wrapped = nextMessage > rows.length;
  const consistency = {
    statusesSent: statusesToWebhook,
    answeredApplied: appliedByWebhook,
    ...applied!,
    messagesUsed: nextMessage,
    wrappedAround: wrapped,
    everyStatusAppliedOnce:
      !wrapped &&
      appliedByWebhook === statusesToWebhook &&
      applied!.eventsRecorded === statusesToWebhook &&
      applied!.stepsMoved === statusesToWebhook,
    ledger,
  };
  console.error('consistency', JSON.stringify(consistency));

  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: {
      endpoint: 'POST /whatsapp/webhook',
      bare: 'POST /bench/whatsapp/webhook (same registration, schemas and body; no signature, no database)',
      mix: 'per message: sent, delivered, read, one status per body, in order on one connection; messages accepted with their wamid and hold',
      secondsPerRun: SECONDS,
      rounds: ROUNDS,
      messages: rows.length,
      signatureHeader: WHATSAPP_SIGNATURE_HEADER,
      postgres: 'embedded, durable (fsync at every commit)',
      temporal: 'none: the messages belong to no lead, no workflow is told',
    },
    signature,
    applyInProcess,
    levels,
    consistency,
  };
  const loadAverage = os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');
  writeBenchResults('whatsapp-webhooks', result, [
    `# WhatsApp status webhooks benchmark (${result.measuredAt})`,
    '',
    ...(process.env.BENCH_NOTE ? [`**${process.env.BENCH_NOTE}**`, ''] : []),
    `POST /whatsapp/webhook (X-Hub-Signature-256 checked over the raw body, then per status one statement: the message locked, the event recorded once by wamid and status, the message moved forward; delivered posts its credit hold, read settles it again idempotently) against a bare POST route of the same app with the same body and schemas. Meta-shaped bodies, one status each: every message is reported sent, delivered, read in order on one connection (${result.setup.messages} messages made first, ${nextMessage} used). The load generator is its own process and signs every body. ${ROUNDS} alternating rounds of ${SECONDS} s per level; ${result.machine.cpus} CPUs shared by server, PostgreSQL and load generator (load average at the end ${loadAverage}); Node ${process.version}; no Temporal involved. Medians.`,
    '',
    '| connections | route | webhooks/s | p50 ms | p99 ms | errors |',
    '|-|-|-|-|-|-|',
    ...levels.flatMap((level) => [
      `| ${level.connections} | bare route | ${level.bare.rps} | ${level.bare.p50Ms} | ${level.bare.p99Ms} | ${level.bare.errors} |`,
      `| ${level.connections} | webhook (signed, applied) | ${level.webhook.rps} | ${level.webhook.p50Ms} | ${level.webhook.p99Ms} | ${level.webhook.errors} |`,
    ]),
    '',
    ...levels.map(
      (level) =>
        `- ${level.connections} connection(s): the webhook keeps ${(level.webhookOverBareRps * 100).toFixed(1)} % of the bare route's throughput (ratio ${level.webhookOverBareRps}); a status costs ${level.webhookCostP50Ms} ms more at p50.`,
    ),
    `- The signature check alone, in process, on a ${signature.bodyBytes}-byte body: ${signature.verifyUs} µs per verify (${signature.signUs} µs per sign), over ${VERIFICATIONS} calls.`,
    `- receiveWhatsAppWebhook alone (what the route runs after the signature and validation), in process, one status at a time on unused messages: ${Object.entries(
      applyInProcess,
    )
      .map(([status, figures]) => `${status} p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms`)
      .join(
        '; ',
      )} (${APPLIED_IN_PROCESS} messages; delivered also posts the hold, read settles it again, idempotently).`,
    `- Every status applied once: ${consistency.everyStatusAppliedOnce ? 'yes' : '**NO**'} (${statusesToWebhook} statuses sent to the webhook, ${appliedByWebhook} answered applied, ${consistency.eventsRecorded} recorded, ${consistency.stepsMoved} steps moved by the messages; ${consistency.messagesRead} messages read${wrapped ? '; the messages wrapped around: raise BENCH_MESSAGES' : ''}).`,
    `- Holds after the run: ${JSON.stringify(ledger.holds)} (holdNotAsStatus: messages whose hold is not posted with one charge once delivered or read, or not pending before); the ledger ${ledger.ledgerSumsToBalance ? 'sums to' : '**DOES NOT sum to**'} the balance ${ledger.balance}.`,
    SECONDS < 8 || ROUNDS < 3
      ? '- A small-scale run on a shared machine (fewer or shorter rounds than the defaults); for the full figures run it on a quiet machine with the defaults.'
      : '',
    '',
  ]);
  console.log(JSON.stringify(levels.map(({ runs: _runs, ...level }) => level)));
  await db.$disconnect();
  await close();
  if (!consistency.everyStatusAppliedOnce || !ledger.ledgerSumsToBalance || ledger.holds.holdNotAsStatus)
    process.exitCode = 1;
} finally {
  await bench.stop();
}
process.exit(process.exitCode ?? 0);
