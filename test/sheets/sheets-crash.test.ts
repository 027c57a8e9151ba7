import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { insertLeads, settle, sheetClient } from '../support/sheets';
import { startTestWorker, uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { createTestWorkspace } from '../support/workspace';
import { until } from '../support/until';
import { exportWorkerProcesses } from '../support/worker-process';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient(uniqueTaskQueue('sheets-crash'));
const exportDir = mkdtempSync(path.join(os.tmpdir(), 'sheets-crash-'));
afterAll(() => rmSync(exportDir, { recursive: true, force: true }));
const exportTaskQueue = `${temporal.taskQueue}-exports`;
const api = await startTestApi({ db, url, temporal, exports: { dir: exportDir, taskQueue: exportTaskQueue } });
// The sheet's workflow runs in this process; its activities in an export worker process, killed mid-sync.
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(await startTestCarrier(db), api) });
const startExportWorker = exportWorkerProcesses({ databaseUrl: url, exportTaskQueue, exportDir });
const owner = await createTestWorkspace(db, { scopes: ['intel.view', 'campaigns.edit'], settings: { plan: 'basic' } });
const sheets = sheetClient(api, owner.key);

const LEADS = 40_000;

describe('a live sheet whose export worker is killed with SIGKILL mid-sync', () => {
  it('is finished by the next worker with every lead in exactly one row', async () => {
    const campaign = await db.campaign.create({ data: { workspaceId: owner.workspaceId, name: 'Crash' } });
    await insertLeads(db, campaign, LEADS);
    await db.$executeRaw`ANALYZE "Lead", "Call"`;
    await settle();
    const first = startExportWorker();
    const created = await api.request('POST', sheets.path(campaign.id), { key: owner.key, body: {} });
    expect(created.status).toBe(201);
    const { id: sheetId } = (await created.json()) as { id: string };

    // Killed once some pages are in the sheet and before the pass is over.
    const atCrash = await until(
      () => sheets.read(campaign.id),
      (sheet) => sheet.progress.rowsWritten >= 3_000,
      120_000,
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const afterKill = await sheets.read(campaign.id);
    expect(afterKill.status, 'the kill came mid-sync').toBe('rebuilding');
    expect(afterKill.rows).toBeLessThan(LEADS);

    startExportWorker();
    const done = await sheets.synced(campaign.id, 0, 180_000);
    expect(done.rows).toBe(LEADS);
    expect(done.progress.rowsWritten).toBeGreaterThanOrEqual(LEADS);
    expect(atCrash.rows).toBeGreaterThan(0);

    // Every lead holds one row, the rows are 2..LEADS+1 with no gap, and the file says the same.
    const positions = await db.$queryRaw<Array<{ rows: number; leads: number; first: number; last: number }>>`
      SELECT count(*)::int AS rows, count(DISTINCT "leadId")::int AS leads, min(row) AS first, max(row) AS last
      FROM "LiveSheetRow" WHERE "sheetId" = ${sheetId}::uuid`;
    expect(positions[0]).toEqual({ rows: LEADS, leads: LEADS, first: 2, last: LEADS + 1 });
    const [header, ...rows] = await sheets.download(campaign.id, 'csv');
    expect(header![0]).toBe('leadId');
    expect(rows).toHaveLength(LEADS);
    const inFile = rows.map((row) => row[0]!);
    expect(new Set(inFile).size).toBe(LEADS);
    const leads = await db.lead.findMany({ where: { campaignId: campaign.id }, select: { id: true } });
    expect([...inFile].sort()).toEqual(leads.map((lead) => lead.id).sort());
  }, 400_000);
});
