import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultExportTaskQueue } from '../../lib/config';
import { SHEET_COLUMNS } from '../../lib/sheets/columns';
import { localSheetsDir } from '../../lib/sheets/local-provider';
import { createSqlPool } from '../../lib/sql-pool';
import { liveSheetWorkflowId } from '../../lib/temporal/workflow-ids';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { defaultTestExportDir } from '../support/export-dir';
import { useTestDatabase } from '../support/database';
import { insertLeads, settle, sheetClient } from '../support/sheets';
import { startTestExportWorker, startTestWorker, uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { until } from '../support/until';
import { ALWAYS_OPEN, QUICK_LADDER } from '../support/ladders';
import { leadResult } from '../support/lead-workflows';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient(uniqueTaskQueue('sheets'));
const sql = createSqlPool(url);
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db);
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });
await startTestExportWorker(defaultExportTaskQueue(temporal.taskQueue), { sql });
const owner = await createTestWorkspace(db, {
  scopes: ['intel.view', 'campaigns.edit', 'campaigns.delete'],
  settings: { plan: 'basic' },
});
const sheets = sheetClient(api, owner.key);

const newCampaign = (workspaceId = owner.workspaceId) => db.campaign.create({ data: { workspaceId, name: 'Sheets' } });

async function leadsOf(campaignId: string) {
  return db.lead.findMany({ where: { campaignId }, include: { calls: { orderBy: { startedAt: 'desc' } } } });
}

/** An ended call of a lead, as the dial ladder records one. */
async function endCall(
  lead: { id: string; workspaceId: string; campaignId: string },
  attempt: number,
  outcome: string,
) {
  const call = await db.call.create({
    data: {
      workspaceId: lead.workspaceId,
      campaignId: lead.campaignId,
      leadId: lead.id,
      attempt,
      attemptId: `${lead.id}:${attempt}`,
      provider: 'simulated',
      status: 'dialing',
      startedAt: new Date(Date.now() - 60_000 + attempt * 1000),
    },
  });
  await db.call.update({
    where: { id: call.id },
    data: { status: 'ended', outcome, durationMs: 12_000, endedAt: new Date() },
  });
  await db.lead.update({ where: { id: lead.id }, data: { status: 'completed' } });
  return call;
}

/** The sheet's rows by leadId, from a download (header first). */
function byLead(rows: string[][]) {
  const [header, ...body] = rows;
  const index = header!.indexOf('leadId');
  const map = new Map(
    body.map((row) => [row[index]!, Object.fromEntries(header!.map((name, i) => [name, row[i] ?? '']))]),
  );
  expect(map.size, 'each lead once').toBe(body.length);
  return map;
}

async function syncNow(campaignId: string) {
  const before = await sheets.read(campaignId);
  const response = await api.request('POST', `${sheets.path(campaignId)}/sync`, { key: owner.key, body: {} });
  expect(response.status).toBe(202);
  return sheets.synced(campaignId, before.progress.syncNumber);
}

describe('a live sheet', () => {
  it('syncs incrementally while the campaign runs, rebuilds, downloads in both formats, and is deleted with its workflow and file', async () => {
    const campaign = await newCampaign();
    await insertLeads(db, campaign, 5);
    await settle();
    const created = await api.request('POST', sheets.path(campaign.id), {
      key: owner.key,
      body: { intervalSeconds: 3600 },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/campaigns/${campaign.id}/sheet`);
    const sheet = (await created.json()) as { id: string; provider: string; columns: string[] };
    expect(sheet.provider).toBe('local');
    expect(sheet.columns).toEqual([...SHEET_COLUMNS]);

    // The first sync: a full pass, every lead once.
    let state = await sheets.synced(campaign.id, 0);
    expect({ rows: state.rows, written: state.lastSyncRowsWritten }).toEqual({ rows: 5, written: 5 });
    expect(state.cursor).toMatchObject({ phase: 'changes' });
    let csv = byLead(await sheets.download(campaign.id, 'csv'));
    expect([...csv.keys()].sort()).toEqual((await leadsOf(campaign.id)).map((lead) => lead.id).sort());

    // The campaign runs: two new leads, and one lead's call ends answered.
    const [called] = await leadsOf(campaign.id);
    const call = await endCall(called!, 1, 'answered');
    await insertLeads(db, campaign, 2, 6);
    await settle();
    state = await syncNow(campaign.id);
    expect({ rows: state.rows, written: state.lastSyncRowsWritten }).toEqual({ rows: 7, written: 3 });
    csv = byLead(await sheets.download(campaign.id, 'csv'));
    expect(csv.size).toBe(7);
    expect(csv.get(called!.id)).toMatchObject({
      lastCallId: call.id,
      outcome: 'answered',
      calls: '1',
      leadStatus: 'completed',
      evaluationScore: '',
    });

    // Nothing changed: nothing is written.
    await settle();
    state = await syncNow(campaign.id);
    expect(state.lastSyncRowsWritten).toBe(0);

    // The call's intelligence is computed: that one row, and only it, is rewritten.
    await db.call.update({
      where: { id: call.id },
      data: {
        intelligence: {
          extraction: { budget: { value: 'high' } },
          evaluation: { score: 87 },
          provider: 'test',
          computedAt: new Date().toISOString(),
        },
      },
    });
    await settle();
    state = await syncNow(campaign.id);
    expect(state.lastSyncRowsWritten).toBe(1);
    const beforeRebuild = byLead(await sheets.download(campaign.id, 'csv'));
    expect(beforeRebuild.get(called!.id)).toMatchObject({
      evaluationScore: '87',
      extractedFields: '{"budget": "high"}',
    });

    // Both formats hold the same rows, which are the leads as stored.
    const xlsx = byLead(await sheets.download(campaign.id, 'xlsx'));
    expect([...xlsx.entries()].map(([id, row]) => [id, row.phone, row.leadName])).toEqual(
      [...beforeRebuild.entries()].map(([id, row]) => [id, row.phone, row.leadName]),
    );
    for (const lead of await leadsOf(campaign.id)) {
      expect(beforeRebuild.get(lead.id)).toMatchObject({ phone: `'${lead.phone}`, leadName: lead.name ?? '' });
      expect(xlsx.get(lead.id)).toMatchObject({ phone: `'${lead.phone}` });
    }

    // A rebuild writes every row again from scratch, to the same content.
    const rebuild = await api.request('POST', `${sheets.path(campaign.id)}/rebuild`, { key: owner.key });
    expect(rebuild.status).toBe(202);
    state = await sheets.synced(campaign.id, state.progress.syncNumber);
    expect({ rows: state.rows, written: state.lastSyncRowsWritten }).toEqual({ rows: 7, written: 7 });
    expect(byLead(await sheets.download(campaign.id, 'csv'))).toEqual(beforeRebuild);
    expect(await db.liveSheetRow.count({ where: { sheetId: sheet.id } })).toBe(7);

    // New columns: the sheet is rewritten with them.
    const patched = await api.request('PATCH', sheets.path(campaign.id), {
      key: owner.key,
      body: { columns: ['phone', 'leadId', 'outcome'] },
    });
    expect(patched.status).toBe(200);
    state = await sheets.synced(campaign.id, state.progress.syncNumber);
    const narrow = await sheets.download(campaign.id, 'csv');
    expect(narrow[0]).toEqual(['phone', 'leadId', 'outcome']);
    expect(narrow).toHaveLength(8);
    expect(byLead(narrow).get(called!.id)).toEqual({
      phone: `'${called!.phone}`,
      leadId: called!.id,
      outcome: 'answered',
    });

    // A schedule of 5 seconds takes a new lead without being asked.
    const rescheduled = await api.request('PATCH', sheets.path(campaign.id), {
      key: owner.key,
      body: { intervalSeconds: 5 },
    });
    expect(((await rescheduled.json()) as { intervalSeconds: number }).intervalSeconds).toBe(5);
    await insertLeads(db, campaign, 1, 8);
    state = await until(
      () => sheets.read(campaign.id),
      (current) => current.rows === 8 && current.status === 'idle',
    );
    expect(state.lastSyncRowsWritten).toBe(1);

    // DELETE: the workflow stops and the file goes.
    const folder = path.join(localSheetsDir(defaultTestExportDir), sheet.id);
    expect(existsSync(path.join(folder, 'sheet.xlsx'))).toBe(true);
    const deleted = await api.request('DELETE', sheets.path(campaign.id), { key: owner.key });
    expect(deleted.status).toBe(204);
    await temporal.client.workflow.getHandle(liveSheetWorkflowId(sheet.id)).result();
    expect(existsSync(folder)).toBe(false);
    const gone = await api.request('GET', sheets.path(campaign.id), { key: owner.key });
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ error: 'sheet_not_found' });
    expect(await db.liveSheetRow.count({ where: { sheetId: sheet.id } })).toBe(0);
  });

  it('follows a real campaign: leads pushed, dialed by the worker on the simulated carrier, synced while their ladders run', async () => {
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Sheets live',
        acceptsLeadPush: true,
        status: 'RUNNING',
        dialLadder: QUICK_LADDER,
        callingWindow: ALWAYS_OPEN,
      },
    });
    const created = await api.request('POST', sheets.path(campaign.id), {
      key: owner.key,
      body: { intervalSeconds: 5 },
    });
    expect(created.status).toBe(201);
    // Answered numbers end in 0, busy ones in 5: the busy ones walk the ladder's rungs while the sheet syncs.
    const phones = Array.from({ length: 8 }, (_, index) => `+1415555${2000 + index * 10 + (index % 2 ? 5 : 0)}`);
    const keys = phones.map(() => randomUUID());
    const pushed = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
      key: owner.key,
      body: { leads: phones.map((phone, index) => ({ lead: { phone }, idempotencyKey: keys[index] })) },
    });
    expect(pushed.status).toBe(200);
    // A sync lands while calls are still being placed and ended.
    const midway = await until(
      () => sheets.read(campaign.id),
      (sheet) => sheet.status === 'idle' && sheet.rows > 0,
    );
    const finished = await Promise.all(keys.map((key) => leadResult(temporal.client, campaign.id, key)));
    expect(finished).toHaveLength(8);
    await settle();
    const final = await syncNow(campaign.id);
    expect(final.rows).toBe(8);
    expect(final.rowsWrittenTotal).toBeGreaterThanOrEqual(midway.rowsWrittenTotal + 1);
    const csv = byLead(await sheets.download(campaign.id, 'csv'));
    const leads = await leadsOf(campaign.id);
    expect(csv.size).toBe(leads.length);
    for (const lead of leads) {
      const last = lead.calls[0]!;
      expect(csv.get(lead.id), lead.phone).toMatchObject({
        phone: `'${lead.phone}`, // a leading + is quoted against formula injection, as in exports
        leadStatus: lead.status,
        lastCallId: last.id,
        outcome: last.outcome,
        calls: String(lead.calls.length),
      });
    }
    expect(new Set(leads.map((lead) => lead.calls[0]!.outcome))).toEqual(new Set(['answered', 'busy']));
  });

  it('is one per campaign, and refuses bad input with 400 changing nothing', async () => {
    const campaign = await newCampaign();
    expect((await api.request('POST', sheets.path(campaign.id), { key: owner.key, body: {} })).status).toBe(201);
    const second = await api.request('POST', sheets.path(campaign.id), { key: owner.key, body: {} });
    expect(second.status).toBe(409);
    expect(await second.json()).toEqual({ error: 'sheet_exists' });
    for (const body of [
      { intervalSeconds: 1 },
      { intervalSeconds: 86_401 },
      { columns: [] },
      { columns: ['nope'] },
      { columns: ['phone', 'phone'] },
    ]) {
      const response = await api.request('PATCH', sheets.path(campaign.id), { key: owner.key, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_body');
    }
    expect((await api.request('PATCH', sheets.path(campaign.id), { key: owner.key, body: {} })).status).toBe(400);
    expect((await sheets.read(campaign.id)).intervalSeconds).toBe(300);
    const other = await newCampaign();
    const noSheet = await api.request('POST', `${sheets.path(other.id)}/sync`, { key: owner.key });
    expect(noSheet.status).toBe(404);
    const badFormat = await api.request('GET', `${sheets.path(campaign.id)}/download?format=pdf`, { key: owner.key });
    expect(badFormat.status).toBe(400);
  });
});

describe('the door of live sheets', () => {
  it('needs intel.view to read, campaigns.edit to create, change, sync and rebuild, campaigns.delete to delete', async () => {
    const cases: Array<[string, string, string, string]> = [
      ['GET', '', 'campaigns.edit', 'intel.view'],
      ['GET', '/download', 'campaigns.edit', 'intel.view'],
      ['POST', '', 'intel.view', 'campaigns.edit'],
      ['PATCH', '', 'intel.view', 'campaigns.edit'],
      ['POST', '/sync', 'intel.view', 'campaigns.edit'],
      ['POST', '/rebuild', 'intel.view', 'campaigns.edit'],
      ['DELETE', '', 'campaigns.edit', 'campaigns.delete'],
    ];
    for (const [method, suffix, held, needed] of cases) {
      const workspace = await createTestWorkspace(db, { scopes: [held], settings: { plan: 'basic' } });
      const own = await newCampaign(workspace.workspaceId);
      const response = await api.request(method, `${sheets.path(own.id)}${suffix}`, {
        key: workspace.key,
        body: method === 'GET' || method === 'DELETE' ? undefined : { intervalSeconds: 60 },
      });
      expect({ status: response.status, body: await response.json() }, `${method} ${suffix}`).toEqual({
        status: 403,
        body: { error: 'forbidden', requiredPermission: needed },
      });
    }
  });

  it('needs a plan including business intelligence', async () => {
    const workspace = await createTestWorkspace(db, {
      scopes: ['intel.view', 'campaigns.edit'],
      settings: { plan: 'none' },
    });
    const campaign = await newCampaign(workspace.workspaceId);
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', ''],
      ['POST', '/sync'],
    ] as const) {
      const response = await api.request(method, `${sheets.path(campaign.id)}${suffix}`, {
        key: workspace.key,
        body: method === 'POST' ? {} : undefined,
      });
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: 'plan_required', requiredPlan: 'basic' });
    }
  });

  it("refuses another workspace's campaign, and keys attaching an arbitrary spreadsheet", async () => {
    const stranger = await createTestWorkspace(db, { settings: { plan: 'basic' } });
    const theirs = await newCampaign(stranger.workspaceId);
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', ''],
      ['DELETE', ''],
      ['GET', '/download'],
    ] as const) {
      const response = await api.request(method, `${sheets.path(theirs.id)}${suffix}`, {
        key: owner.key,
        body: method === 'POST' ? {} : undefined,
      });
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: 'forbidden' });
    }
    expect(await db.liveSheet.count({ where: { campaignId: theirs.id } })).toBe(0);
    const attach = await api.request('POST', `${sheets.path(randomUUID())}/attach`, { key: owner.key, body: {} });
    expect(attach.status).toBe(403);
    expect(await attach.json()).toEqual({ error: 'api_key_not_allowed' });
  });
});
