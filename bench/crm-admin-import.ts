// `npm run bench:crm-admin-import`: customers per second of a Shopify Admin API import (crmImportWorkflow on the
// production worker, its own process: each page read through @shopify/admin-api-client and applied in one
// transaction) through the store twin, against the baseline measured in the same run: the same pages read bare by
// the same client, nothing applied. Two buckets: one too large to throttle (the import's own cost), and one scaled
// down (restoring BENCH_RESTORE_RATE points a second) whose ceiling is computed from Shopify's rule: a page of 250
// asks for 502 points, so at R points a second at most 250 * R / 502 customers a second.
// One PostgreSQL and one Temporal CLI dev server (scripts/stack/ephemeral-stack.ts). Writes
// bench/results/crm-admin-import.json and .md.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { startBenchStack, startBenchWorker } from './bench-process';
import { benchMachine, writeBenchResults } from './results-files';
import { setCrmAdminToken } from '../lib/crm/admin-token';
import { connectCrm } from '../lib/crm/connections';
import { CUSTOMERS_PAGE_SIZE, readCustomersPage } from '../lib/crm/shopify-admin';
import type { CrmImportWorkflowResult } from '../lib/crm/crm-import';
import { createDatabase } from '../lib/database';
import { addMember, createWorkspace } from '../lib/door/workspace-admin';
import { keyringSchema, newKeyringEntry } from '../lib/secrets/keyring';
import { startCrmImportWorkflow } from '../lib/temporal/crm';
import { crmImportWorkflowId } from '../lib/temporal/workflow-ids';
import { createStoreAdminTwin, twinCustomers } from '../simulators/shopify-twin/admin-twin';

const CUSTOMERS = Number(process.env.BENCH_CUSTOMERS ?? 10_000);
const RESTORE_RATE = Number(process.env.BENCH_RESTORE_RATE ?? 500);
const PAGE_COST = 2 + CUSTOMERS_PAGE_SIZE * 2;

const keys = newKeyringEntry('bench');
const keyring = keyringSchema.parse(keys);
const shops = ['open', 'throttled'].map((name) => ({
  shopDomain: `bench-${name}.myshopify.com`,
  accessToken: `shpat_bench_${name}_${randomUUID()}`,
  customers: twinCustomers(CUSTOMERS),
}));
const open = createStoreAdminTwin({
  shops: [shops[0]!],
  bucketSize: 1_000_000,
  restoreRate: 1_000_000,
  maxQueryCost: 1000,
});
const throttled = createStoreAdminTwin({ shops: [shops[1]!], bucketSize: 1000, restoreRate: RESTORE_RATE });
const openUrl = await open.listen();
const throttledUrl = await throttled.listen();

const { stack, stop, started, databaseUrl } = await startBenchStack('bench_crm_admin');
try {
  const db = createDatabase(databaseUrl, { poolSize: 5 });
  const taskQueue = `bench-crm-admin-${randomUUID()}`;
  const worker = startBenchWorker(
    { databaseUrl, temporalAddress: stack.temporalAddress, taskQueue, bundlePath: stack.workflowBundlePath },
    { SECRETS_KEYS: keys },
  );
  started.push(worker);
  await worker.printed('worker polling task queue', 120_000);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection });
  const { id: workspaceId } = await createWorkspace(db, 'Bench', {});
  await addMember(db, workspaceId, 'bench@bench.localhost', 'owner');

  /** The baseline: every page read bare by the same client, one after the other, nothing applied. */
  async function bareReads(shop: (typeof shops)[number], baseUrl: string) {
    const opened = {
      connectionId: randomUUID(),
      shopDomain: shop.shopDomain,
      provider: 'shopify-twin' as const,
      baseUrl,
      accessToken: shop.accessToken,
    };
    const startedAt = performance.now();
    let after: string | null = null;
    let read = 0;
    for (;;) {
      const page = await readCustomersPage(opened, after);
      if (page.kind !== 'page') throw new Error('the open bucket throttled');
      read += page.customers.length;
      if (!page.hasNextPage) break;
      after = page.endCursor;
    }
    return { customers: read, seconds: (performance.now() - startedAt) / 1000 };
  }

  async function importRun(shop: (typeof shops)[number], baseUrl: string) {
    const { id: connectionId } = await connectCrm(db, keyring, {
      workspaceId,
      kind: 'shopify',
      shopDomain: shop.shopDomain,
      secret: 'S',
    });
    await setCrmAdminToken(db, keyring, { connectionId, token: shop.accessToken, provider: 'shopify-twin', baseUrl });
    const campaign = await db.campaign.create({ data: { workspaceId, name: shop.shopDomain } });
    const importId = randomUUID();
    await db.crmImport.create({
      data: { id: importId, workspaceId, campaignId: campaign.id, connectionId, provider: 'shopify-twin' },
    });
    const startedAt = performance.now();
    await startCrmImportWorkflow(client, taskQueue, importId, { campaignId: campaign.id, workspaceId });
    const result = (await client.workflow.getHandle(crmImportWorkflowId(importId)).result()) as CrmImportWorkflowResult;
    const seconds = (performance.now() - startedAt) / 1000;
    const row = await db.crmImport.findUniqueOrThrow({ where: { id: importId } });
    const listed = await db.campaignContact.count({ where: { campaignId: campaign.id } });
    return { result, seconds, row, listed };
  }

  const bare = await bareReads(shops[0]!, openUrl);
  const unthrottled = await importRun(shops[0]!, openUrl);
  const underBucket = await importRun(shops[1]!, throttledUrl);
  const ceiling = (CUSTOMERS_PAGE_SIZE * RESTORE_RATE) / PAGE_COST;
  const rate = (customers: number, seconds: number) => Number((customers / seconds).toFixed(1));
  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: { customers: CUSTOMERS, pageSize: CUSTOMERS_PAGE_SIZE, pageCost: PAGE_COST, restoreRate: RESTORE_RATE },
    bareReads: { ...bare, customersPerSecond: rate(bare.customers, bare.seconds) },
    importUnthrottled: {
      seconds: Number(unthrottled.seconds.toFixed(2)),
      customersPerSecond: rate(unthrottled.row.customersRead, unthrottled.seconds),
      imported: unthrottled.row.imported,
      listed: unthrottled.listed,
      status: unthrottled.result.status,
    },
    importUnderBucket: {
      seconds: Number(underBucket.seconds.toFixed(2)),
      customersPerSecond: rate(underBucket.row.customersRead, underBucket.seconds),
      ceilingCustomersPerSecond: Number(ceiling.toFixed(1)),
      throttledWaits: underBucket.row.throttledWaits,
      twinThrottledAnswers: throttled.stats.throttled,
      imported: underBucket.row.imported,
      status: underBucket.result.status,
    },
  };
  writeBenchResults('crm-admin-import', result, [
    `# Shopify Admin import benchmark (${result.measuredAt})`,
    '',
    `${CUSTOMERS} twin customers in pages of ${CUSTOMERS_PAGE_SIZE} (${PAGE_COST} points a page), read through @shopify/admin-api-client from the store twin. The import: crmImportWorkflow on worker/main.ts in its own process, each page read and applied (contacts listed, cursor checkpointed) in one transaction. The baseline, the same run: the same pages read bare by the same client, nothing applied. ${result.machine.cpus} CPUs (${result.machine.model}), load average ${result.machine.loadAverage.map((value) => value.toFixed(2)).join(', ')}; Node ${process.version}; the Temporal CLI dev server in memory.`,
    '',
    '| run | seconds | customers/s | ceiling customers/s |',
    '|-|-|-|-|',
    `| bare reads (baseline) | ${bare.seconds.toFixed(2)} | ${result.bareReads.customersPerSecond} | |`,
    `| import, bucket never empty | ${result.importUnthrottled.seconds} | ${result.importUnthrottled.customersPerSecond} | |`,
    `| import, bucket 1000 restoring ${RESTORE_RATE}/s | ${result.importUnderBucket.seconds} | ${result.importUnderBucket.customersPerSecond} | ${result.importUnderBucket.ceilingCustomersPerSecond} |`,
    '',
    `- Imported ${result.importUnthrottled.imported} of ${CUSTOMERS} (the others skipped by reason), ${result.importUnthrottled.listed} listed; under the bucket ${result.importUnderBucket.throttledWaits} waits, ${result.importUnderBucket.twinThrottledAnswers} THROTTLED answers from the twin.`,
    `- At Shopify's standard 50 points a second the ceiling is ${((CUSTOMERS_PAGE_SIZE * 50) / PAGE_COST).toFixed(1)} customers a second once the bucket's first 1000 points are spent.`,
    '',
  ]);
  console.log(JSON.stringify(result, null, 2));
  await connection.close();
  await db.$disconnect();
} finally {
  await open.close();
  await throttled.close();
  await stop();
}
