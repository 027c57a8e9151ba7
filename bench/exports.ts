// `npm run bench:exports`: a calls export of BENCH_EXPORT_ROWS rows (default 1,000,000) as CSV through the
// job path, on real servers started for the run (as in the tests): POST /campaigns/{id}/exports answers
// 202, the job's workflow runs on the production main worker and its activities on the production export
// worker (worker/export-worker.ts), each in its own process; the bench polls the status endpoint until the
// job is completed and downloads the file. Measured: time from the request to the completed job, the
// export worker's RSS idle, sampled during the job, and at its peak (VmHWM: the goal's figure), the main
// worker's too, and the download. Baseline, in the same run on the same rows: PostgreSQL itself writing
// the same columns in the same order as CSV (COPY … TO STDOUT through pg-copy-streams), piped to a file
// by this process, before and after the job. Writes bench/results/exports.json and .md.
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Client, Connection } from '@temporalio/client';
import { to as copyTo } from 'pg-copy-streams';
import { benchExports, benchTemporalServices, serveBenchApp } from './bench-app-services';
import { EXPORT_PAGE_ROWS } from '../api/exports/exports';
import { createDatabase } from '../lib/database';
import { createSqlPool } from '../lib/sql-pool';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { startBenchExportWorker, startBenchStack, startBenchWorker } from './bench-process';
import { writeBenchResults } from './results-files';

const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);
const PAGE_ROWS = Number(process.env.BENCH_PAGE_ROWS ?? EXPORT_PAGE_ROWS);
const CALLS_PER_LEAD = 4;
const GOALS = { jobUnderSeconds: 30, exportWorkerPeakRssUnderMb: 256 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (since: number) => Number(((performance.now() - since) / 1000).toFixed(2));

const { stack, stop, started: measuredProcesses, databaseUrl } = await startBenchStack('bench');
const exportDir = mkdtempSync(path.join(os.tmpdir(), 'bench-exports-'));
try {
  const db = createDatabase(databaseUrl);
  const sql = createSqlPool(databaseUrl);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection });
  const taskQueue = `bench-exports-${Date.now()}`;
  const { id: workspaceId } = await createWorkspace(db, 'Bench', { plan: 'basic', rateLimitPerMinute: 1_000_000 });
  const { key } = await createApiKey(db, (await addMember(db, workspaceId, 'bench@bench.localhost', 'owner')).id, {
    scopes: ['intel.view'],
  });
  const campaign = await db.campaign.create({ data: { workspaceId, name: 'Bench exports' } });

  // The rows: leads with fields, CALLS_PER_LEAD calls each, one second apart.
  let began = performance.now();
  const leads = Math.ceil(ROWS / CALLS_PER_LEAD);
  await sql.query(
    `
    INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, name, fields, "workflowId", "requestId", "updatedAt")
    SELECT gen_random_uuid(), $1, $2, 'bench-' || g, '+1415' || lpad(g::text, 7, '0'), 'Lead ' || g,
      jsonb_build_object('plan', 'pro', 'source', 'bench', 'score', g % 100), 'not-started-' || g, gen_random_uuid(), now()
    FROM generate_series(1, $3::int) g`,
    [workspaceId, campaign.id, leads],
  );
  await sql.query(
    `
    INSERT INTO "Call" (id, "workspaceId", "campaignId", "leadId", attempt, "attemptId", provider, status, outcome, "durationMs", "startedAt", "endedAt")
    SELECT gen_random_uuid(), l."workspaceId", l."campaignId", l.id, a, l.id || ':' || a, 'simulated', 'ended', 'answered', 30000 + a,
      timestamp '2026-01-01' + (substring(l."idempotencyKey" from 7)::int * ${CALLS_PER_LEAD} + a) * interval '1 second',
      timestamp '2026-01-01' + (substring(l."idempotencyKey" from 7)::int * ${CALLS_PER_LEAD} + a + 30) * interval '1 second'
    FROM "Lead" l, generate_series(1, ${CALLS_PER_LEAD}) a WHERE l."campaignId" = $1 LIMIT $2`,
    [campaign.id, ROWS],
  );
  await sql.query('VACUUM ANALYZE "Lead", "Call"');
  const seeded = { rows: ROWS, seconds: seconds(began) };
  console.error('seeded', seeded);

  // Baseline: PostgreSQL writes the same columns, in the same order, as CSV.
  const baselineQuery = `COPY (
    SELECT c.id, c."leadId", l.phone, l.name, c.attempt, c.status, c.outcome, c."durationMs",
      to_char(c."startedAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(c."endedAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), c.provider, l.fields::text
    FROM "Call" c JOIN "Lead" l ON l.id = c."leadId" WHERE c."campaignId" = '${campaign.id}' ORDER BY c."startedAt", c.id
  ) TO STDOUT WITH (FORMAT csv, HEADER)`;
  const baseline = async () => {
    const client = await sql.connect();
    const target = path.join(exportDir, 'baseline.csv');
    const started = performance.now();
    try {
      await pipeline(client.query(copyTo(baselineQuery)), createWriteStream(target));
    } finally {
      client.release();
    }
    return { seconds: seconds(started), bytes: statSync(target).size };
  };
  const baselineBefore = await baseline();
  console.error('baseline (COPY) before', baselineBefore);

  const app = await serveBenchApp(
    benchTemporalServices({
      db,
      sql,
      temporal,
      temporalConnection: connection,
      taskQueue,
      exports: benchExports(exportDir, PAGE_ROWS, taskQueue),
    }),
    key,
  );
  const { request } = app;

  // The production workers, each in its own process: the main one runs the job's workflow, the export one its activities.
  const mainWorker = startBenchWorker({
    databaseUrl,
    temporalAddress: stack.temporalAddress,
    taskQueue,
    bundlePath: stack.workflowBundlePath,
  });
  const exportWorker = startBenchExportWorker({
    databaseUrl,
    temporalAddress: stack.temporalAddress,
    taskQueue,
    exportDir,
  });
  measuredProcesses.push(mainWorker, exportWorker);
  await Promise.all([mainWorker.printed('polling'), exportWorker.printed('polling')]);
  const idle = { exportWorker: exportWorker.memory(), mainWorker: mainWorker.memory() };
  console.error('idle', idle);

  // The job: 202, then the status endpoint until it is completed, with the export worker's RSS alongside.
  const started = performance.now();
  const created = await request('POST', `/campaigns/${campaign.id}/exports`, {});
  if (created.status !== 202) throw new Error(`export answered ${created.status}: ${await created.text()}`);
  const {
    job: { id: exportId },
  } = (await created.json()) as { job: { id: string } };
  let status: { status: string; percent: number; downloadUrl: string | null };
  const samples: Array<{ seconds: number; percent: number; exportWorkerRssMb: number }> = [];
  for (;;) {
    status = (await (await request('GET', `/campaigns/${campaign.id}/exports/${exportId}`)).json()) as typeof status;
    samples.push({
      seconds: seconds(started),
      percent: status.percent,
      exportWorkerRssMb: exportWorker.memory().rssMb,
    });
    if (status.status === 'completed' || status.status === 'failed') break;
    await sleep(250);
  }
  const jobSeconds = seconds(started);
  const peak = { exportWorker: exportWorker.memory(), mainWorker: mainWorker.memory() };
  exportWorker.stop();
  mainWorker.stop();
  if (status.status !== 'completed') throw new Error(`export ${status.status}`);
  const job = {
    requestToCompletedSeconds: jobSeconds,
    rowsPerSecond: Math.round(ROWS / jobSeconds),
    exportWorker: { idleRssMb: idle.exportWorker.rssMb, peakRssMb: peak.exportWorker.peakRssMb },
    mainWorker: { idleRssMb: idle.mainWorker.rssMb, peakRssMb: peak.mainWorker.peakRssMb },
    samples: samples.filter((_, index) => index % 4 === 0 || index === samples.length - 1),
  };
  console.error('job', job);

  // The download, counted as it streams.
  began = performance.now();
  const download = await request('GET', status.downloadUrl!);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of download.body! as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (const byte of chunk) if (byte === 10) lines += 1;
  }
  const downloaded = {
    seconds: seconds(began),
    bytes,
    dataRows: lines - 1,
    contentType: download.headers.get('content-type'),
  };
  if (downloaded.dataRows !== ROWS) throw new Error(`the file has ${downloaded.dataRows} rows, not ${ROWS}`);
  const baselineAfter = await baseline();
  console.error('baseline (COPY) after', baselineAfter);

  app.close();
  const bestBaseline = Math.min(baselineBefore.seconds, baselineAfter.seconds);
  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version },
    rows: ROWS,
    pageRows: PAGE_ROWS,
    seeded,
    job,
    download: downloaded,
    baselineCopy: { before: baselineBefore, after: baselineAfter },
    jobOverBaseline: Number((jobSeconds / bestBaseline).toFixed(2)),
    goals: GOALS,
    goalsMet: {
      time: jobSeconds < GOALS.jobUnderSeconds,
      memory: job.exportWorker.peakRssMb < GOALS.exportWorkerPeakRssUnderMb,
    },
  };
  writeBenchResults('exports', result, [
    `# Calls export benchmark (${result.measuredAt})`,
    '',
    `${result.machine.cpus} CPUs shared by PostgreSQL, the Temporal dev server, the API, both workers and the bench; Node ${process.version}.`,
    `${ROWS.toLocaleString('en')} calls of one campaign (${leads.toLocaleString('en')} leads with fields), exported as CSV through the job path; pages of ${PAGE_ROWS} rows.`,
    '',
    '| measure | seconds | rows/s | notes |',
    '|-|-|-|-|',
    `| export job: POST → status completed | ${jobSeconds} | ${job.rowsPerSecond} | export worker (worker/export-worker.ts) peak RSS ${job.exportWorker.peakRssMb} MB (idle ${job.exportWorker.idleRssMb} MB); main worker, running the workflow, peak ${job.mainWorker.peakRssMb} MB (idle ${job.mainWorker.idleRssMb} MB) |`,
    `| download of the finished file | ${downloaded.seconds} | ${Math.round(ROWS / downloaded.seconds)} | ${(bytes / 1e6).toFixed(1)} MB, ${downloaded.contentType} |`,
    `| baseline: COPY … TO STDOUT (csv) to a file, before the job | ${baselineBefore.seconds} | ${Math.round(ROWS / baselineBefore.seconds)} | ${(baselineBefore.bytes / 1e6).toFixed(1)} MB |`,
    `| baseline: the same, after the job | ${baselineAfter.seconds} | ${Math.round(ROWS / baselineAfter.seconds)} | |`,
    '',
    `- The job takes ${result.jobOverBaseline}× the time PostgreSQL needs to write the same rows itself (best baseline), and adds what the baseline has not: resumable checkpoints (a heartbeat and a progress update per page), formula neutralisation, the status endpoint's progress.`,
    `- Goals: under ${GOALS.jobUnderSeconds} s (${result.goalsMet.time ? 'met' : 'missed'}) and under ${GOALS.exportWorkerPeakRssUnderMb} MB of peak RSS in the process doing the export (${result.goalsMet.memory ? 'met' : 'missed'}), started as deployed.`,
    `- The export worker's RSS during the job (seconds: MB): ${job.samples.map((sample) => `${sample.seconds}: ${sample.exportWorkerRssMb}`).join(', ')}.`,
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
