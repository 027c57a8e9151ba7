// `npm run bench:google-sheets`: live sheet rows per second written to Google Sheets under the write quota, through the
// Google Sheets twin (Google's quota: 60 write requests a minute per account), against the quota's ceiling (rows per
// write × writes per minute). A campaign of BENCH_GOOGLE_SHEET_LEADS leads (default 30,000) attached to a spreadsheet
// of the twin; its full pass timed from the sync request to the sheet idle, with the production main worker and
// export worker (worker/export-worker.ts) as processes of their own, at the default pace (SHEETS_GOOGLE_WRITES_PER_MINUTE
// 54, burst 5). Baseline, in the same run on the same machine: the same pass with the pace lifted and a twin without a
// quota (what the pipeline does when Google is not the limit). Writes bench/results/google-sheets.json and .md.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { SHEET_PAGE_ROWS } from '../activities/sheets/sheets';
import { EXPORT_PAGE_ROWS } from '../api/exports/exports';
import { createDatabase } from '../lib/database';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { keyringSchema, newKeyringEntry } from '../lib/secrets/keyring';
import { attachSpreadsheet, connectSheets } from '../lib/sheets/connections';
import { createSqlPool } from '../lib/sql-pool';
import { createGoogleSheetsTwin, type TwinWrite } from '../simulators/google-twin/server';
import { benchExports, benchTemporalServices, serveBenchApp } from './bench-app-services';
import { startBenchExportWorker, startBenchStack, startBenchWorker } from './bench-process';
import { writeBenchResults } from './results-files';

const LEADS = Number(process.env.BENCH_GOOGLE_SHEET_LEADS ?? 30_000);
const PACE = { writesPerMinute: 54, burst: 5 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const { stack, stop, started, databaseUrl } = await startBenchStack('bench');
const exportDir = mkdtempSync(path.join(os.tmpdir(), 'bench-google-sheets-'));
const twins = [
  createGoogleSheetsTwin({ writesPerWindow: 60, quotaWindowMs: 60_000 }),
  createGoogleSheetsTwin({ writesPerWindow: 1_000_000, quotaWindowMs: 60_000 }),
];
try {
  const [quotaUrl, freeUrl] = await Promise.all(twins.map((twin) => twin.listen(0)));
  const keys = newKeyringEntry('bench');
  const keyring = keyringSchema.parse(keys);
  const db = createDatabase(databaseUrl);
  const sql = createSqlPool(databaseUrl);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection });
  const taskQueue = `bench-google-sheets-${Date.now()}`;
  const { id: workspaceId } = await createWorkspace(db, 'Bench', { plan: 'basic', rateLimitPerMinute: 1_000_000 });
  const { key } = await createApiKey(db, (await addMember(db, workspaceId, 'bench@bench.localhost', 'owner')).id, {
    scopes: ['intel.view', 'campaigns.edit'],
  });
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
  const mainWorker = startBenchWorker({
    databaseUrl,
    temporalAddress: stack.temporalAddress,
    taskQueue,
    bundlePath: stack.workflowBundlePath,
  });
  started.push(mainWorker);
  await mainWorker.printed('polling');

  type Sheet = { status: string; rows: number; progress: { syncNumber: number } };
  const readSheet = async (campaignId: string) =>
    (await (await app.request('GET', `/campaigns/${campaignId}/sheet`)).json()) as Sheet;
  const synced = async (campaignId: string, afterSync: number) => {
    for (;;) {
      const sheet = await readSheet(campaignId);
      if (sheet.progress.syncNumber > afterSync && sheet.status === 'idle') return sheet;
      await sleep(200);
    }
  };

  /** One full pass of LEADS rows to a spreadsheet of `twinUrl`, by an export worker at `pace`. */
  async function pass(name: string, twinIndex: number, twinUrl: string, pace: typeof PACE) {
    const exportWorker = startBenchExportWorker({
      databaseUrl,
      temporalAddress: stack.temporalAddress,
      taskQueue,
      exportDir,
      extra: {
        SECRETS_KEYS: keys,
        SHEETS_GOOGLE_WRITES_PER_MINUTE: String(pace.writesPerMinute),
        SHEETS_GOOGLE_WRITE_BURST: String(pace.burst),
      },
    });
    started.push(exportWorker);
    await exportWorker.printed('polling');
    const serviceAccount = (await (
      await fetch(`${twinUrl}/control/service-accounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ clientEmail: `${name}@bench.iam.gserviceaccount.com` }),
      })
    ).json()) as { client_email: string };
    const { spreadsheetId } = (await (
      await fetch(`${twinUrl}/control/spreadsheets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sharedWith: [serviceAccount.client_email] }),
      })
    ).json()) as { spreadsheetId: string };
    const sheetConnection = await connectSheets(db, keyring, {
      workspaceId,
      provider: 'google-twin',
      baseUrl: `${twinUrl}/`,
      keyJson: JSON.stringify(serviceAccount),
    });
    const campaign = await db.campaign.create({ data: { workspaceId, name: `Bench ${name}` } });
    const posted = await app.request('POST', `/campaigns/${campaign.id}/sheet`, { intervalSeconds: 86_400 });
    if (posted.status !== 201) throw new Error(`sheet answered ${posted.status}: ${await posted.text()}`);
    await synced(campaign.id, 0);
    await attachSpreadsheet(db, { campaignId: campaign.id, connectionId: sheetConnection.id, spreadsheetId });
    await sql.query(
      `INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, name, fields, status, "workflowId", "requestId", "updatedAt")
       SELECT gen_random_uuid(), $1, $2, $4 || g, '+1415' || lpad(g::text, 7, '0'), 'Lead ' || g,
         jsonb_build_object('plan', 'pro', 'score', g % 100), 'completed', 'not-started-' || g, gen_random_uuid(), now()
       FROM generate_series(1, $3::int) g`,
      [workspaceId, campaign.id, LEADS, `bench-${name}-`],
    );
    await sleep(2_100); // the sheet's settle time
    const before = (await readSheet(campaign.id)).progress.syncNumber;
    const began = performance.now();
    const since = Date.now();
    await app.request('POST', `/campaigns/${campaign.id}/sheet/sync`);
    const sheet = await synced(campaign.id, before);
    const seconds = (performance.now() - began) / 1000;
    exportWorker.stop();
    const writes = twins[twinIndex]!.writes().filter(
      (write: TwinWrite) => write.account === serviceAccount.client_email && write.at >= since,
    );
    const accepted = writes.filter((write) => write.outcome === 'accepted').map((write) => write.at);
    let busiestMinute = 0;
    for (let start = 0, end = 0; end < accepted.length; end++) {
      while (accepted[end]! - accepted[start]! >= 60_000) start++;
      busiestMinute = Math.max(busiestMinute, end - start + 1);
    }
    const result = {
      rows: sheet.rows,
      seconds: Number(seconds.toFixed(2)),
      rowsPerSecond: Math.round(sheet.rows / seconds),
      writeRequests: accepted.length,
      refusedOverQuota: writes.filter((write) => write.outcome === 'quota').length,
      busiestMinute,
    };
    console.error(name, result);
    return result;
  }

  const baseline = await pass('unpaced', 1, freeUrl!, { writesPerMinute: 6_000, burst: 600 });
  const paced = await pass('paced', 0, quotaUrl!, PACE);
  const ceiling = Math.round((SHEET_PAGE_ROWS * PACE.writesPerMinute) / 60);
  mainWorker.stop();
  app.close();

  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version },
    leads: LEADS,
    rowsPerWrite: SHEET_PAGE_ROWS,
    pace: PACE,
    googleQuota: { writesPerMinutePerUser: 60 },
    ceilingRowsPerSecond: ceiling,
    paced,
    baselineUnpaced: baseline,
    pacedOverCeiling: Number((paced.rowsPerSecond / ceiling).toFixed(3)),
  };
  writeBenchResults('google-sheets', result, [
    `# Live sheets on Google, through the twin (${result.measuredAt})`,
    '',
    `${result.machine.cpus} CPUs shared by PostgreSQL, the Temporal dev server (in memory), the API, the workers, the twins and the bench; Node ${process.version}.`,
    `A full pass of ${LEADS.toLocaleString('en')} leads to a spreadsheet of the Google Sheets twin, from the sync request to the sheet idle (polled every 200 ms), pages of ${SHEET_PAGE_ROWS} rows (one values.batchUpdate each), the grid grown from 1,000 x 26 on the way.`,
    '',
    '| run | rows/s | seconds | write requests | busiest minute | refused over quota |',
    '|-|-|-|-|-|-|',
    `| under the quota (twin: 60 writes/min; pace ${PACE.writesPerMinute}/min, burst ${PACE.burst}) | ${paced.rowsPerSecond} | ${paced.seconds} | ${paced.writeRequests} | ${paced.busiestMinute} | ${paced.refusedOverQuota} |`,
    `| baseline: pace lifted, twin without quota | ${baseline.rowsPerSecond} | ${baseline.seconds} | ${baseline.writeRequests} | ${baseline.busiestMinute} | ${baseline.refusedOverQuota} |`,
    '',
    `- Ceiling under the quota: ${SHEET_PAGE_ROWS} rows per write × ${PACE.writesPerMinute} writes a minute = ${ceiling} rows/s; measured ${paced.rowsPerSecond} rows/s (${(result.pacedOverCeiling * 100).toFixed(1)} %). The rest goes to the writes that carry no rows (the tab, the header, the grid growths) and to the first ${PACE.burst} writes' burst being spent at the start.`,
    '- The baseline shows what the pipeline does when Google is not the limit: the quota, not the service, bounds a Google sheet.',
    '',
  ]);
  console.log(JSON.stringify(result));
  await sql.end();
  await db.$disconnect();
  await connection.close();
} finally {
  await Promise.all(twins.map((twin) => twin.close()));
  rmSync(exportDir, { recursive: true, force: true });
  await stop();
}
process.exit(0);
