// `npm run bench:sheets`: the live sheet of a campaign of BENCH_SHEET_LEADS leads (default 100,000), one
// answered call each with its intelligence, on real servers started for the run (as in the tests). The
// sheet's workflow runs on the production main worker and its activities on the production export worker
// (worker/export-worker.ts), each its own process. Measured: the first sync (a full pass, then the CSV and
// XLSX published), an incremental sync after 1% of the leads changed, and an idle sync, each from the
// request to the sheet idle, with the export worker's peak RSS (VmHWM). Baseline, in the same run on the
// same rows: the existing export job (POST /campaigns/{id}/exports, CSV, one row per call) in a fresh
// export worker process. Writes bench/results/sheets.json and .md.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { benchExports, benchTemporalServices, serveBenchApp } from './bench-app-services';
import { EXPORT_PAGE_ROWS } from '../api/exports/exports';
import { createDatabase } from '../lib/database';
import { createSqlPool } from '../lib/sql-pool';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { startBenchExportWorker, startBenchStack, startBenchWorker } from './bench-process';
import { writeBenchResults } from './results-files';

const LEADS = Number(process.env.BENCH_SHEET_LEADS ?? 100_000);
const CHANGED = Math.max(1, Math.floor(LEADS / 100));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (since: number) => Number(((performance.now() - since) / 1000).toFixed(2));

const { stack, stop, started, databaseUrl } = await startBenchStack('bench');
const exportDir = mkdtempSync(path.join(os.tmpdir(), 'bench-sheets-'));
try {
  const db = createDatabase(databaseUrl);
  const sql = createSqlPool(databaseUrl);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection });
  const taskQueue = `bench-sheets-${Date.now()}`;
  const { id: workspaceId } = await createWorkspace(db, 'Bench', { plan: 'basic', rateLimitPerMinute: 1_000_000 });
  const { key } = await createApiKey(db, (await addMember(db, workspaceId, 'bench@bench.localhost', 'owner')).id, {
    scopes: ['intel.view', 'campaigns.edit'],
  });
  const campaign = await db.campaign.create({ data: { workspaceId, name: 'Bench sheets' } });

  let began = performance.now();
  await sql.query(
    `INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, name, fields, status, "workflowId", "requestId", "updatedAt")
     SELECT gen_random_uuid(), $1, $2, 'bench-' || g, '+1415' || lpad(g::text, 7, '0'), 'Lead ' || g,
       jsonb_build_object('plan', 'pro', 'source', 'bench', 'score', g % 100), 'completed', 'not-started-' || g, gen_random_uuid(), now()
     FROM generate_series(1, $3::int) g`,
    [workspaceId, campaign.id, LEADS],
  );
  await sql.query(
    `INSERT INTO "Call" (id, "workspaceId", "campaignId", "leadId", attempt, "attemptId", provider, status, outcome, "durationMs", "startedAt", "endedAt", intelligence)
     SELECT gen_random_uuid(), l."workspaceId", l."campaignId", l.id, 1, l.id || ':1', 'simulated', 'ended', 'answered', 30000,
       timestamp '2026-01-01' + substring(l."idempotencyKey" from 7)::int * interval '1 second',
       timestamp '2026-01-01' + (substring(l."idempotencyKey" from 7)::int + 30) * interval '1 second',
       jsonb_build_object('extraction', jsonb_build_object('budget', jsonb_build_object('value', 'high'), 'interest', jsonb_build_object('value', 'yes')),
         'evaluation', jsonb_build_object('score', 80), 'provider', 'bench', 'computedAt', '2026-01-01T00:00:00Z')
     FROM "Lead" l WHERE l."campaignId" = $1`,
    [campaign.id],
  );
  await sql.query('VACUUM ANALYZE "Lead", "Call"');
  const seeded = { leads: LEADS, calls: LEADS, seconds: seconds(began) };
  console.error('seeded', seeded);
  await sleep(2_100); // the sheet's settle time

  const app = await serveBenchApp(
    benchTemporalServices({
      db,
      sql,
      temporal,
      temporalConnection: connection,
      taskQueue,
      exports: benchExports(exportDir, EXPORT_PAGE_ROWS, taskQueue),
    }),
    key,
  );
  const { request } = app;

  const mainWorker = startBenchWorker({
    databaseUrl,
    temporalAddress: stack.temporalAddress,
    taskQueue,
    bundlePath: stack.workflowBundlePath,
  });
  started.push(mainWorker);
  const exportWorkerProcess = () => {
    const exportWorker = startBenchExportWorker({
      databaseUrl,
      temporalAddress: stack.temporalAddress,
      taskQueue,
      exportDir,
    });
    started.push(exportWorker);
    return exportWorker;
  };

  // Baseline: the export job of the same rows, in an export worker of its own.
  let exportWorker = exportWorkerProcess();
  await Promise.all([mainWorker.printed('polling'), exportWorker.printed('polling')]);
  const idleRssMb = exportWorker.memory().rssMb;
  began = performance.now();
  const created = await request('POST', `/campaigns/${campaign.id}/exports`, {});
  if (created.status !== 202) throw new Error(`export answered ${created.status}: ${await created.text()}`);
  const { job } = (await created.json()) as { job: { id: string } };
  for (;;) {
    const status = (await (await request('GET', `/campaigns/${campaign.id}/exports/${job.id}`)).json()) as {
      status: string;
    };
    if (status.status === 'completed') break;
    if (status.status === 'failed') throw new Error('export failed');
    await sleep(200);
  }
  const exportJob = { seconds: seconds(began), peakRssMb: exportWorker.memory().peakRssMb, idleRssMb };
  exportWorker.stop();
  console.error('export job', exportJob);

  // The sheet, in a fresh export worker, so that its peak is the sheet's alone.
  exportWorker = exportWorkerProcess();
  await exportWorker.printed('polling');
  type Sheet = { status: string; rows: number; lastSyncRowsWritten: number; progress: { syncNumber: number } };
  const readSheet = async () => (await (await request('GET', `/campaigns/${campaign.id}/sheet`)).json()) as Sheet;
  const synced = async (afterSync: number) => {
    for (;;) {
      const sheet = await readSheet();
      if (sheet.progress.syncNumber > afterSync && sheet.status === 'idle') return sheet;
      await sleep(200);
    }
  };
  began = performance.now();
  const posted = await request('POST', `/campaigns/${campaign.id}/sheet`, { intervalSeconds: 86_400 });
  if (posted.status !== 201) throw new Error(`sheet answered ${posted.status}: ${await posted.text()}`);
  let sheet = await synced(0);
  const firstSync = {
    seconds: seconds(began),
    rowsWritten: sheet.lastSyncRowsWritten,
    peakRssMb: exportWorker.memory().peakRssMb,
  };
  console.error('first sync', firstSync);

  // 1% of the leads get a second call: their rows, and only theirs, are written again.
  await sql.query(
    `INSERT INTO "Call" (id, "workspaceId", "campaignId", "leadId", attempt, "attemptId", provider, status, outcome, "durationMs", "startedAt", "endedAt")
     SELECT gen_random_uuid(), l."workspaceId", l."campaignId", l.id, 2, l.id || ':2', 'simulated', 'ended', 'busy', 0, now(), now()
     FROM "Lead" l WHERE l."campaignId" = $1 ORDER BY l.id LIMIT $2`,
    [campaign.id, CHANGED],
  );
  await sleep(2_100);
  const timedSync = async () => {
    const before = sheet.progress.syncNumber;
    const started = performance.now();
    await request('POST', `/campaigns/${campaign.id}/sheet/sync`);
    sheet = await synced(before);
    return { seconds: seconds(started), rowsWritten: sheet.lastSyncRowsWritten };
  };
  const incremental = await timedSync();
  console.error('incremental', incremental);
  const idleSync = await timedSync();
  console.error('idle sync', idleSync);
  const sheetPeakRssMb = exportWorker.memory().peakRssMb;
  exportWorker.stop();
  mainWorker.stop();
  app.close();

  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version },
    leads: LEADS,
    seeded,
    baselineExportJob: exportJob,
    sheet: {
      firstSync,
      incremental: { changedLeads: CHANGED, ...incremental },
      idleSync,
      exportWorkerPeakRssMb: sheetPeakRssMb,
    },
    firstSyncOverExport: Number((firstSync.seconds / exportJob.seconds).toFixed(2)),
  };
  writeBenchResults('sheets', result, [
    `# Live sheet benchmark (${result.measuredAt})`,
    '',
    `${result.machine.cpus} CPUs shared by PostgreSQL, the Temporal dev server (in memory), the API, both workers and the bench; Node ${process.version}.`,
    `${LEADS.toLocaleString('en')} leads of one campaign, one answered call each with its intelligence. Each measure from the request to the sheet (or job) done, polled every 200 ms.`,
    '',
    '| measure | seconds | rows written | export worker peak RSS (VmHWM) |',
    '|-|-|-|-|',
    `| baseline: export job (CSV, one row per call) | ${exportJob.seconds} | ${LEADS} | ${exportJob.peakRssMb} MB (idle ${exportJob.idleRssMb} MB) |`,
    `| sheet: first sync (full pass, CSV and XLSX published) | ${firstSync.seconds} | ${firstSync.rowsWritten} | ${firstSync.peakRssMb} MB |`,
    `| sheet: sync after ${CHANGED} leads changed | ${incremental.seconds} | ${incremental.rowsWritten} | |`,
    `| sheet: sync with nothing changed | ${idleSync.seconds} | ${idleSync.rowsWritten} | ${sheetPeakRssMb} MB (whole sheet run) |`,
    '',
    `- The first sync takes ${result.firstSyncOverExport}× the export job: it also stores each lead's row position, and publishes the sheet twice (CSV and XLSX) from its cell blocks.`,
    '- An incremental sync writes only the changed rows, but republishes both files (the whole sheet) when any row changed; a sync with no change writes nothing and publishes nothing.',
    '',
  ]);
  console.log(JSON.stringify(result));
  await sql.end();
  await db.$disconnect();
  await connection.close();
} finally {
  rmSync(exportDir, { recursive: true, force: true });
  await stop();
}
process.exit(0);
