// `npm run bench:crm-orders`: Shopify orders/create webhooks received per second by a connection's real
// receiver, POST /crm/connections/{id}/webhooks (X-Shopify-Hmac-Sha256 checked over the raw body, the
// delivery stored once by its event id, its crmDeliveryWorkflow started; answered then), next to a bare
// route of the same app, alternating rounds (bench/alternating-rounds.ts), at BENCH_CONNECTIONS (1 and 10)
// connections; and the time from the receiver's answer to the order being queryable (its CommerceOrder row,
// written by the workflow on a worker), p50/p99. One PostgreSQL and one Temporal CLI dev server
// (scripts/stack/ephemeral-stack.ts), the worker its own process (worker/main.ts), the load generated in
// its own process (bench/load-shopify-orders.ts), which signs every body as Shopify does.
//
// - webhook: each request a new order (simulators/shopify-twin/shopify-orders.ts, a fresh event id), to the
//   receiver of a connection made with connectCrm. After each run the bench waits for every order answered
//   to be queryable (the worker's backlog drained, so it weighs on no later run), then reads each order's
//   createdAt: time to queryable = createdAt - the epoch ms at which the load generator got its answer.
// - bare: POST /bench/crm/webhooks, the same body and response schemas, registered through the same
//   registerRoutes (raw body kept, zod body validation, JSON answer) in the same Express app ahead of the
//   real routes, answering { received, deliveryId, duplicate: false } with no signature, no database, no
//   Temporal. The same signed bodies are sent to it.
// After the runs: one order per webhook answered, every delivery kept processed (none received or failed;
// the receiver keeps the newest CRM_DELIVERIES_KEPT per connection), every workflow completed once.
// Writes bench/results/crm-orders.json and .md.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import express from 'express';
import { type LoadRun, webhookAgainstBare } from './alternating-rounds';
import { benchAppServices } from './bench-app-services';
import { startBenchStack, startBenchWorker } from './bench-process';
import { runLoadProcess } from './load-process';
import { writeBenchResults } from './results-files';
import { createApp } from '../api/app';
import { keyringSchema, newKeyringEntry } from '../lib/secrets/keyring';
import { registerRoutes } from '../api/http/register-routes';
import { defineRoute } from '../api/http/route';
import { crmRoutes } from '../api/crm/routes';
import { connectCrm, crmWebhookPath } from '../lib/crm/connections';
import { CRM_DELIVERIES_KEPT } from '../lib/crm/deliveries';
import { createDatabase } from '../lib/database';
import { addMember, createWorkspace } from '../lib/door/workspace-admin';
import { waitFor } from '../scripts/stack/child-process';

const CONCURRENCY = (process.env.BENCH_CONNECTIONS ?? '1,10').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SHOP = 'bench-shop.myshopify.com';
const SECRET = `bench-${randomUUID()}`;
/** The first order id's sequence number of the shop (shopifyOrderPayload: id 5940139000000 + seq). */
const ORDER_ID_BASE = 5_940_139_000_000;

const percentile = (sorted: number[], share: number) =>
  sorted.length ? Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!.toFixed(1)) : 0;

const { stack, stop, started, databaseUrl } = await startBenchStack('bench_crm');
try {
  const db = createDatabase(databaseUrl, { poolSize: 10 });
  const { id: workspaceId } = await createWorkspace(db, 'Bench', {});
  await addMember(db, workspaceId, 'bench@bench.localhost', 'owner');
  // The API opens the connection's sealed webhook secret with the same ring (its SECRETS_KEYS).
  const keyring = keyringSchema.parse(newKeyringEntry('bench'));
  const { id: connectionId } = await connectCrm(db, keyring, {
    workspaceId,
    kind: 'shopify',
    shopDomain: SHOP,
    secret: SECRET,
  });

  // The worker that runs the deliveries' workflows, its own process as deployed.
  const taskQueue = `bench-crm-${randomUUID()}`;
  const worker = startBenchWorker({
    databaseUrl,
    temporalAddress: stack.temporalAddress,
    taskQueue,
    bundlePath: stack.workflowBundlePath,
  });
  started.push(worker);
  await worker.printed('worker polling');

  // One app, in this process: the real routes (their Temporal client on the dev server) and the bare route
  // registered the same way ahead of them.
  const temporalConnection = Connection.lazy({ address: stack.temporalAddress });
  const temporal = new Client({ connection: temporalConnection });
  const { services, close } = await benchAppServices(db, databaseUrl, {
    temporal,
    temporalConnection,
    taskQueue,
    carrierKeyring: keyring,
  });
  const receiverRoute = crmRoutes.find((route) => route.path === '/crm/connections/{id}/webhooks')!;
  const bareRoute = defineRoute({
    method: 'post',
    path: '/bench/crm/webhooks',
    access: { public: true },
    summary: 'Bench only: the receiver without signature check, database and Temporal.',
    body: receiverRoute.body!,
    responses: receiverRoute.responses,
    handler: async () => ({
      status: 200,
      body: { received: true as const, deliveryId: randomUUID(), duplicate: false },
    }),
  });
  const app = express();
  registerRoutes(app, [bareRoute], services);
  app.use(createApp(services));
  const server = await new Promise<import('node:http').Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const targets = { bare: `${baseUrl}/bench/crm/webhooks`, webhook: `${baseUrl}${crmWebhookPath(connectionId)}` };

  type Run = LoadRun & { ordersSent: number; answeredAt: Array<[number, number]> };
  type Summarised = LoadRun & { ordersSent: number; queryableP50Ms?: number; queryableP99Ms?: number };
  let nextSeq = 0;
  let answeredByWebhook = 0;
  let sentToWebhook = 0;
  const queryableMs: Record<number, number[]> = {};
  const load = async (variant: 'bare' | 'webhook', connections: number): Promise<Summarised> => {
    const first = variant === 'webhook' ? nextSeq : 1_000_000_000;
    const run = await runLoadProcess<Run>(
      'bench/load-shopify-orders.ts',
      [targets[variant], SHOP, String(first), String(connections), String(SECONDS)],
      { BENCH_SHOPIFY_SECRET: SECRET },
    );
    const { answeredAt, ...figures } = run;
    if (variant === 'bare') return figures;
    nextSeq += run.ordersSent;
    sentToWebhook += run.ordersSent;
    answeredByWebhook += answeredAt.length;
    // Every order answered becomes queryable: wait for the worker, then each one's time from its answer.
    const ids = answeredAt.map(([seq]) => String(ORDER_ID_BASE + seq));
    await waitFor(
      'the orders answered to be queryable',
      async () => {
        const count = await db.commerceOrder.count({ where: { connectionId, externalOrderId: { in: ids } } });
        if (count < ids.length) throw new Error(`${ids.length - count} orders not yet queryable`);
      },
      300_000,
    );
    // Then the rest of their workflows (the delivery marked processed), so that no backlog weighs on the next run.
    await waitFor(
      'the delivery workflows to end',
      async () => {
        const { count } = await temporal.workflow.count(`TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`);
        if (count) throw new Error(`${count} delivery workflows running`);
      },
      300_000,
    );
    const orders = await db.commerceOrder.findMany({
      where: { connectionId, externalOrderId: { in: ids } },
      select: { externalOrderId: true, createdAt: true },
    });
    const createdAt = new Map(orders.map((order) => [order.externalOrderId, order.createdAt.getTime()]));
    const delays = answeredAt
      .map(([seq, at]) => createdAt.get(String(ORDER_ID_BASE + seq))! - at)
      .sort((a, b) => a - b);
    (queryableMs[connections] ??= []).push(...delays);
    return { ...figures, queryableP50Ms: percentile(delays, 0.5), queryableP99Ms: percentile(delays, 0.99) };
  };
  const levels = (await webhookAgainstBare(CONCURRENCY, ROUNDS, load)).map(({ runs, ...level }) => {
    const delays = (queryableMs[level.connections] ?? []).sort((a, b) => a - b);
    // Over every order of the level, warm-up included.
    const queryable = { orders: delays.length, p50Ms: percentile(delays, 0.5), p99Ms: percentile(delays, 0.99) };
    return { ...level, queryable, runs };
  });

  // The delivery workflows end after their order is queryable (the delivery marked processed): wait for them.
  const statuses = async () => {
    const byStatus: Record<string, number> = {};
    for await (const execution of temporal.workflow.list({ query: `TaskQueue = '${taskQueue}'` }))
      byStatus[execution.status.name] = (byStatus[execution.status.name] ?? 0) + 1;
    return byStatus;
  };
  await waitFor(
    'the delivery workflows to end',
    async () => {
      const running = (await statuses()).RUNNING ?? 0;
      if (running) throw new Error(`${running} delivery workflows running`);
    },
    300_000,
  ).catch((error: Error) => console.error(error.message));
  const byStatus = await statuses();
  const workflows = {
    completed: byStatus.COMPLETED ?? 0,
    other: answeredByWebhook - (byStatus.COMPLETED ?? 0),
    byStatus,
  };
  // One order per webhook answered, every delivery processed, every delivery workflow completed once.
  const [counts] = await db.$queryRawUnsafe<
    Array<{ orders: number; distinctOrders: number; deliveriesKept: number; deliveriesProcessed: number }>
  >(
    `SELECT (SELECT count(*) FROM "CommerceOrder" WHERE "connectionId" = $1::uuid)::int AS orders,
            (SELECT count(DISTINCT "externalOrderId") FROM "CommerceOrder" WHERE "connectionId" = $1::uuid)::int AS "distinctOrders",
            (SELECT count(*) FROM "CrmWebhookDelivery" WHERE "connectionId" = $1::uuid)::int AS "deliveriesKept",
            (SELECT count(*) FROM "CrmWebhookDelivery" WHERE "connectionId" = $1::uuid AND status = 'processed')::int AS "deliveriesProcessed"`,
    connectionId,
  );
  const consistency = {
    webhooksSent: sentToWebhook,
    answered: answeredByWebhook,
    ...counts!,
    workflows,
    oneOrderPerWebhook:
      answeredByWebhook === sentToWebhook &&
      counts!.orders === answeredByWebhook &&
      counts!.distinctOrders === counts!.orders,
    everyDeliveryProcessedOnce:
      // The trim at each delivery spares those still received: the ones in flight at the last trim stay beyond CRM_DELIVERIES_KEPT.
      counts!.deliveriesKept >= Math.min(answeredByWebhook, CRM_DELIVERIES_KEPT) &&
      counts!.deliveriesProcessed === counts!.deliveriesKept &&
      workflows.completed === answeredByWebhook &&
      workflows.other === 0,
  };
  console.error('consistency', JSON.stringify(consistency));

  // The receiver alone: the worker stopped, so that nothing processes the deliveries while they arrive
  // (they stay received). What the answer costs apart from the pipeline behind it, at each level, once.
  worker.stop();
  const receiverAlone: Array<LoadRun & { connections: number }> = [];
  for (const connections of CONCURRENCY) {
    const run = await runLoadProcess<Run>(
      'bench/load-shopify-orders.ts',
      [targets.webhook, SHOP, String(nextSeq), String(connections), String(SECONDS)],
      { BENCH_SHOPIFY_SECRET: SECRET },
    );
    nextSeq += run.ordersSent;
    const { answeredAt: _answeredAt, ...figures } = run;
    receiverAlone.push({ connections, ...figures });
    console.error(`${connections} conn, receiver alone: ${JSON.stringify(figures)}`);
  }

  const temporalCli = path.basename(path.dirname(process.env.TEMPORAL_CLI_PATH ?? 'temporal-cli/temporal'));
  const loadAverage = os.loadavg().map((value) => Number(value.toFixed(2)));
  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadAverage },
    setup: {
      endpoint: 'POST /crm/connections/{id}/webhooks (orders/create)',
      bare: 'POST /bench/crm/webhooks (same registration, schemas and body; no signature, no database, no Temporal)',
      secondsPerRun: SECONDS,
      rounds: ROUNDS,
      postgres: 'embedded, the test stack (not durable: no fsync)',
      temporal: `Temporal CLI dev server (${temporalCli}, in-memory), one worker process (worker/main.ts)`,
      queryable: "the order's CommerceOrder.createdAt minus the epoch ms at which the load generator got the 200",
    },
    levels,
    consistency,
    receiverAlone,
  };
  const ok = consistency.oneOrderPerWebhook && consistency.everyDeliveryProcessedOnce;
  writeBenchResults('crm-orders', result, [
    `# CRM order webhooks benchmark (${result.measuredAt})`,
    '',
    ...(process.env.BENCH_NOTE ? [`**${process.env.BENCH_NOTE}**`, ''] : []),
    `POST /crm/connections/{id}/webhooks with Shopify orders/create bodies (X-Shopify-Hmac-Sha256 checked over the raw body, the delivery stored once by its event id, its crmDeliveryWorkflow started on Temporal, then answered; the worker applies the order after the answer) against a bare POST route of the same app with the same body and schemas. Every request is a new order, signed by the load generator in its own process. Time to queryable: from the receiver's answer to the order's CommerceOrder row (its createdAt), over every order of the level. ${ROUNDS} alternating round(s) of ${SECONDS} s per level; ${result.machine.cpus} CPUs (${result.machine.model}) shared by the app, the worker, PostgreSQL, Temporal and the load generator, and with other work (load average at the end ${loadAverage.join(', ')}); Node ${process.version}; ${result.setup.temporal}; PostgreSQL ${result.setup.postgres}. Medians of the rounds.`,
    '',
    '| connections | route | webhooks/s | p50 ms | p99 ms | errors | queryable p50 ms | queryable p99 ms |',
    '|-|-|-|-|-|-|-|-|',
    ...levels.flatMap((level) => [
      `| ${level.connections} | bare route | ${level.bare.rps} | ${level.bare.p50Ms} | ${level.bare.p99Ms} | ${level.bare.errors} | | |`,
      `| ${level.connections} | receiver (signed, durable) | ${level.webhook.rps} | ${level.webhook.p50Ms} | ${level.webhook.p99Ms} | ${level.webhook.errors} | ${level.queryable.p50Ms} | ${level.queryable.p99Ms} |`,
    ]),
    '',
    ...levels.map(
      (level) =>
        `- ${level.connections} connection(s): the receiver keeps ${(level.webhookOverBareRps * 100).toFixed(1)} % of the bare route's throughput (ratio ${level.webhookOverBareRps}); a webhook costs ${level.webhookCostP50Ms} ms more at p50; ${level.queryable.orders} orders queryable p50 ${level.queryable.p50Ms} ms, p99 ${level.queryable.p99Ms} ms after their answer.`,
    ),
    `- One order per webhook: ${consistency.oneOrderPerWebhook ? 'yes' : '**NO**'} (${sentToWebhook} sent, ${answeredByWebhook} answered 200, ${counts!.orders} orders, ${counts!.distinctOrders} distinct). Every delivery processed once: ${consistency.everyDeliveryProcessedOnce ? 'yes' : '**NO**'} (${counts!.deliveriesProcessed} of the ${counts!.deliveriesKept} deliveries kept processed, the receiver keeping the newest ${CRM_DELIVERIES_KEPT}, more while those still received at the last trim stay; ${workflows.completed} delivery workflows completed, ${workflows.other} in another state).`,
    ...receiverAlone.map(
      (run) =>
        `- The receiver alone (the worker stopped, nothing processing the deliveries meanwhile), ${run.connections} connection(s), one run: ${run.rps} webhooks/s, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, ${run.errors} errors.`,
    ),
    SECONDS < 8 || ROUNDS < 3
      ? '- A small-scale run on a shared machine (fewer or shorter rounds than the defaults); for the full figures run it on a quiet machine with the defaults.'
      : '',
    '',
  ]);
  console.log(JSON.stringify(levels.map(({ runs: _runs, ...level }) => level)));
  server.close();
  await close();
  await temporalConnection.close();
  await db.$disconnect();
  if (!ok) process.exitCode = 1;
} finally {
  await stop();
}
process.exit(process.exitCode ?? 0);
