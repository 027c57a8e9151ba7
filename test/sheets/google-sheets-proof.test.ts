// Issue 31's proof for live sheets on Google: a live sheet of 10,000 rows synced through the Google Sheets twin, beside
// another sheet of the same service account, by two export workers, under the twin's write quota, with 429s injected
// and answers lost: every row exactly once, and the account's writes within the quota in every window.
import { describe, expect, it } from 'vitest';
import { defaultExportTaskQueue } from '../../lib/config';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { attachSpreadsheet, connectSheets } from '../../lib/sheets/connections';
import { createSqlPool } from '../../lib/sql-pool';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import type { TwinWrite } from '../../simulators/google-twin/server';
import { busiestWindow, startGoogleSheetsTwin } from '../support/google-sheets-twin';
import { insertLeads, settle, sheetClient } from '../support/sheets';
import { startTestExportWorker, startTestWorker, uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { until } from '../support/until';

// The twin's quota, a minute compressed to 3 s: 12 writes per account per 3 s window (Google: 60 per 60 s). The
// product's pace, in the same proportion as its default (54 a minute, burst 5, against 60): 180 a minute (9 per 3 s)
// with a burst of 2, so at most 11 writes in any 3 s.
const QUOTA = { writesPerWindow: 12, quotaWindowMs: 3_000 };
const PACE = { writesPerMinute: 180, burst: 2 };

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient(uniqueTaskQueue('google-sheets'));
const sql = createSqlPool(url);
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db);
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });
const keyring = keyringSchema.parse(newKeyringEntry('k1'));
const google = { keyring, pace: PACE, backoff: { firstMs: 200, maxMs: 2_000, attempts: 8 } };
// Two export workers on the one queue: the pace is the account's, whichever worker writes.
for (let worker = 0; worker < 2; worker++)
  await startTestExportWorker(defaultExportTaskQueue(temporal.taskQueue), { sql, sheets: google });
const twin = await startGoogleSheetsTwin(QUOTA);
const owner = await createTestWorkspace(db, {
  scopes: ['intel.view', 'campaigns.edit', 'campaigns.delete'],
  settings: { plan: 'basic' },
});
const sheets = sheetClient(api, owner.key);

/** A campaign with a live sheet attached to a spreadsheet of the twin shared with the account, and `leads` leads. */
async function attachedCampaign(connectionId: string, email: string, leads: number, sharedWith = [email]) {
  const campaign = await db.campaign.create({ data: { workspaceId: owner.workspaceId, name: 'Google sheet' } });
  const created = await api.request('POST', sheets.path(campaign.id), {
    key: owner.key,
    body: { intervalSeconds: 3600 },
  });
  expect(created.status).toBe(201);
  await sheets.synced(campaign.id, 0);
  const spreadsheetId = await twin.spreadsheet(sharedWith);
  const attached = await attachSpreadsheet(db, { campaignId: campaign.id, connectionId, spreadsheetId });
  expect(attached).toMatchObject({ provider: 'google-twin', spreadsheetId, serviceAccountEmail: email });
  await insertLeads(db, campaign, leads);
  return { campaign, spreadsheetId };
}

async function syncNow(campaignId: string) {
  const before = await sheets.read(campaignId);
  const response = await api.request('POST', `${sheets.path(campaignId)}/sync`, { key: owner.key, body: {} });
  expect(response.status).toBe(202);
  return before.progress.syncNumber;
}

/** The twin's Leads tab: the header, then one row per lead, each exactly once, with no gap, and nothing after. */
async function expectExactlyOnce(spreadsheetId: string, campaignId: string) {
  const leads = await db.lead.findMany({ where: { campaignId }, select: { id: true, phone: true, name: true } });
  const [leadsTab] = (await twin.tabs(spreadsheetId)).filter((tab) => tab.title === 'Leads');
  const [header, ...rows] = leadsTab!.values;
  expect(header).toEqual(expect.arrayContaining(['leadId', 'phone', 'leadName']));
  const column = (name: string) => header!.indexOf(name);
  expect(rows).toHaveLength(leads.length);
  expect(
    rows.filter((row) => row.length === 0),
    'no gap',
  ).toHaveLength(0);
  const ids = rows.map((row) => row[column('leadId')]);
  expect(new Set(ids).size, 'no lead twice').toBe(rows.length);
  const byId = new Map(leads.map((lead) => [lead.id, lead]));
  for (const row of rows) {
    const lead = byId.get(String(row[column('leadId')]));
    expect(lead, 'a row of one of the leads').toBeDefined();
    expect([row[column('phone')], row[column('leadName')]]).toEqual([lead!.phone, lead!.name]);
  }
  return leadsTab!;
}

describe('a live sheet on Google, through the twin', () => {
  it('syncs 10,000 rows exactly once under the write quota, with 429s injected and answers lost', async () => {
    const key = await twin.serviceAccount('live-sheets@customer-project.iam.gserviceaccount.com');
    const connection = await connectSheets(db, keyring, {
      workspaceId: owner.workspaceId,
      provider: 'google-twin',
      baseUrl: twin.rootUrl,
      keyJson: JSON.stringify(key),
    });
    const big = await attachedCampaign(connection.id, key.client_email, 10_000);
    const small = await attachedCampaign(connection.id, key.client_email, 2_500);
    await settle();
    // Every 5th write refused with 429 (Retry-After 1 s), and every 4th page written but its answer lost.
    await twin.faults({ quotaEvery: 5, retryAfterSeconds: 1, dropAnswerEvery: 4 });
    const started = Date.now();
    const [bigBefore, smallBefore] = [await syncNow(big.campaign.id), await syncNow(small.campaign.id)];
    const [bigState, smallState] = await Promise.all([
      sheets.synced(big.campaign.id, bigBefore, 240_000),
      sheets.synced(small.campaign.id, smallBefore, 240_000),
    ]);
    const elapsedMs = Date.now() - started;
    await twin.faults({});
    expect({ rows: bigState.rows, status: bigState.status }).toEqual({ rows: 10_000, status: 'idle' });
    expect(smallState.rows).toBe(2_500);
    const sheetRow = await db.liveSheet.findUnique({ where: { campaignId: big.campaign.id } });
    expect(sheetRow).toMatchObject({ provider: 'google-twin', connectionId: connection.id });

    // Rows exactly once, in both spreadsheets; the grid grown from Google's 1,000 x 26 before the writes beyond it.
    const bigTab = await expectExactlyOnce(big.spreadsheetId, big.campaign.id);
    expect(bigTab.rowCount).toBeGreaterThanOrEqual(10_001);
    await expectExactlyOnce(small.spreadsheetId, small.campaign.id);

    // The faults happened, and the account never went over the quota: no 429 of the twin's own, and at most
    // QUOTA.writesPerWindow accepted writes in any window.
    const writes = twin.writes().filter((write) => write.account === key.client_email && write.at >= started);
    const outcomes: Partial<Record<TwinWrite['outcome'], TwinWrite[]>> = {};
    for (const write of writes) (outcomes[write.outcome] ??= []).push(write);
    expect(outcomes.injected?.length ?? 0).toBeGreaterThan(0);
    expect(outcomes.quota ?? []).toHaveLength(0);
    expect(outcomes.invalid ?? []).toHaveLength(0);
    const rewrittenPages = (outcomes.accepted ?? []).filter((write) => write.method === 'values.batchUpdate').length;
    // 10 + 3 pages and 2 headers at least; each lost answer makes its page written again.
    expect(rewrittenPages).toBeGreaterThan(15);
    const busiest = busiestWindow(writes, key.client_email, QUOTA.quotaWindowMs);
    expect(busiest).toBeLessThanOrEqual(QUOTA.writesPerWindow);
    console.log(
      `google twin proof: ${writes.length} write requests (${outcomes.accepted?.length} accepted, ${outcomes.injected?.length} injected 429s) ` +
        `in ${elapsedMs} ms; busiest ${QUOTA.quotaWindowMs} ms window: ${busiest} of ${QUOTA.writesPerWindow}`,
    );
  });

  it('fails the sync at once, naming the account to share with, when the spreadsheet is not shared with it', async () => {
    const key = await twin.serviceAccount('not-shared@customer-project.iam.gserviceaccount.com');
    const connection = await connectSheets(db, keyring, {
      workspaceId: owner.workspaceId,
      provider: 'google-twin',
      baseUrl: twin.rootUrl,
      keyJson: JSON.stringify(key),
    });
    const { campaign } = await attachedCampaign(connection.id, key.client_email, 3, ['someone-else@example.com']);
    await settle();
    const before = await syncNow(campaign.id);
    const failed = await until(
      () => sheets.read(campaign.id),
      (sheet) => sheet.progress.syncNumber > before && sheet.status === 'failed',
    );
    expect((failed as unknown as { error: string }).error).toMatch(
      /403: The caller does not have permission.*shared with not-shared@customer-project\.iam\.gserviceaccount\.com/,
    );
  });
});
