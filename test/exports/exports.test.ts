import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { decodeTimeoutType } from '@temporalio/common';
import { decodePendingActivityState } from '@temporalio/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { defaultExportTaskQueue } from '../../lib/config';
import { EXPORT_COLUMNS } from '../../lib/exports/export-rows';
import { createSqlPool } from '../../lib/sql-pool';
import { exportJobWorkflowId } from '../../lib/temporal/workflow-ids';
import { exportProgressQuery } from '../../lib/temporal/messages';
import { startTestApi, type RunningApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { defaultTestExportDir } from '../support/export-dir';
import { useTestDatabase } from '../support/database';
import { startTestExportWorker, startTestWorker, uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { until } from '../support/until';

import { startEntryPoint } from '../support/processes';
const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient(uniqueTaskQueue('exports'));
const sql = createSqlPool(url);
afterAll(() => sql.end());
// The workflows run on the main worker; their activities on an export worker polling the export queue
// the API names (by default, as the configuration derives it from the task queue).
// Above 10 rows an export is a job; pages of 4 rows make even a small job read several pages.
const api = await startTestApi({ db, url, temporal, exports: { inlineMaxRows: 10, pageRows: 4 } });
const carrier = await startTestCarrier(db);
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });
await startTestExportWorker(defaultExportTaskQueue(temporal.taskQueue), { sql });
const owner = await createTestWorkspace(db, { scopes: ['intel.view'], settings: { plan: 'basic' } });

const CSV = 'text/csv; charset=utf-8';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const BASE = Date.parse('2026-03-01T09:00:00.000Z');
const at = (seconds: number) => new Date(BASE + seconds * 1000);

async function newCampaign(workspaceId = owner.workspaceId) {
  return db.campaign.create({ data: { workspaceId, name: 'Exports' } });
}

async function addLead(
  campaign: { id: string; workspaceId: string },
  lead: { phone?: string; name?: string | null; fields?: object } = {},
) {
  return db.lead.create({
    data: {
      workspaceId: campaign.workspaceId,
      campaignId: campaign.id,
      idempotencyKey: randomUUID(),
      phone: lead.phone ?? '+14155550120',
      name: lead.name ?? null,
      fields: lead.fields ?? {},
      workflowId: `not-started-${randomUUID()}`,
      requestId: randomUUID(),
      status: 'completed',
    },
  });
}

async function addCall(
  lead: { id: string; workspaceId: string; campaignId: string },
  attempt: number,
  startedAt: Date,
  ended = true,
) {
  return db.call.create({
    data: {
      workspaceId: lead.workspaceId,
      campaignId: lead.campaignId,
      leadId: lead.id,
      attempt,
      attemptId: `${lead.id}:${attempt}`,
      provider: 'simulated',
      status: ended ? 'ended' : 'dialing',
      outcome: ended ? 'answered' : null,
      durationMs: ended ? 32_000 : null,
      startedAt,
      endedAt: ended ? new Date(startedAt.getTime() + 32_000) : null,
    },
  });
}

/**
 * `leads` leads with `callsPerLead` calls each, in one statement: three calls share each second, so the
 * (startedAt, id) order has ties that only the id breaks.
 */
async function insertCalls(campaign: { id: string; workspaceId: string }, leads: number, callsPerLead: number) {
  await db.$executeRaw`
    INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, name, fields, "workflowId", "requestId", "updatedAt")
    SELECT gen_random_uuid(), ${campaign.workspaceId}::uuid, ${campaign.id}::uuid, 'bulk-' || g, '+1415' || lpad(g::text, 7, '0'), 'Lead ' || g,
      jsonb_build_object('n', g), 'not-started-' || g, gen_random_uuid(), now()
    FROM generate_series(1, ${leads}::int) g`;
  await db.$executeRaw`
    INSERT INTO "Call" (id, "workspaceId", "campaignId", "leadId", attempt, "attemptId", provider, status, outcome, "durationMs", "startedAt", "endedAt")
    SELECT gen_random_uuid(), l."workspaceId", l."campaignId", l.id, a, l.id || ':' || a, 'simulated', 'ended', 'busy', 1000 * a,
      ${at(0)}::timestamp + (((substring(l."idempotencyKey" from 6)::int - 1) * ${callsPerLead}::int + a) / 3) * interval '1 second', NULL
    FROM "Lead" l, generate_series(1, ${callsPerLead}::int) a
    WHERE l."campaignId" = ${campaign.id}::uuid`;
  // What autovacuum does soon after a bulk write in production: without statistics the planner sorts
  // the whole rest of the campaign for every page instead of walking the index.
  await db.$executeRaw`ANALYZE "Lead", "Call"`;
}

async function callIdsInOrder(campaignId: string): Promise<string[]> {
  const rows = await db.call.findMany({
    where: { campaignId },
    orderBy: [{ startedAt: 'asc' }, { id: 'asc' }],
    select: { id: true },
  });
  return rows.map((row) => row.id);
}

const exportsOf = (campaignId: string) => `/campaigns/${campaignId}/exports`;
const post = (campaignId: string, body: unknown = {}, key = owner.key, through: RunningApi = api) =>
  through.request('POST', exportsOf(campaignId), { key, body });

async function csvOf(response: Response): Promise<string[][]> {
  const bytes = Buffer.from(await response.arrayBuffer());
  // The byte order mark is there for Excel; a parser is told to skip it.
  expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  return parse(bytes, { bom: true, relax_column_count: false }) as string[][];
}

async function xlsxOf(response: Response): Promise<unknown[][]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(Buffer.from(await response.arrayBuffer()) as unknown as ArrayBuffer);
  expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['Calls']);
  const rows: unknown[][] = [];
  workbook.getWorksheet('Calls')!.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
  return rows;
}

type Job = {
  id: string;
  status: string;
  rowsWritten: number;
  totalRows: number;
  percent: number;
  downloadUrl: string | null;
  expiresAt: string | null;
  finishedAt: string | null;
  error: string | null;
};

async function jobStatus(campaignId: string, exportId: string, through: RunningApi = api): Promise<Job> {
  const response = await through.request('GET', `${exportsOf(campaignId)}/${exportId}`, { key: owner.key });
  expect(response.status).toBe(200);
  return (await response.json()) as Job;
}

async function startedJob(campaignId: string, body: unknown = {}, through: RunningApi = api): Promise<Job> {
  const response = await post(campaignId, body, owner.key, through);
  expect(response.status).toBe(202);
  const { job } = (await response.json()) as { job: Job };
  expect(response.headers.get('location')).toBe(`${exportsOf(campaignId)}/${job.id}`);
  return job;
}

describe('POST /campaigns/{id}/exports answered inline', () => {
  it('returns a small campaign as CSV: every column, in call order, formulas neutralised', async () => {
    const campaign = await newCampaign();
    const hyperlink = await addLead(campaign, {
      phone: '+14155550121',
      name: '=HYPERLINK("http://evil.example","click")',
      fields: { plan: 'pro', note: '=1+1' },
    });
    const plus = await addLead(campaign, { phone: '+14155550122', name: '+1', fields: {} });
    const quoted = await addLead(campaign, { phone: '+14155550123', name: 'Ana, "the" Boss\nsecond line' });
    const calls = [
      await addCall(hyperlink, 1, at(0)),
      await addCall(plus, 1, at(1)),
      await addCall(hyperlink, 2, at(2)),
      await addCall(quoted, 1, at(3), false),
    ];
    // Another campaign's call is not in this export.
    await addCall(await addLead(await newCampaign()), 1, at(1));

    const response = await post(campaign.id, {});
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(CSV);
    expect(response.headers.get('content-disposition')).toMatch(
      new RegExp(`^attachment; filename="calls-${campaign.id}-\\d{8}T\\d{6}Z\\.csv"$`),
    );
    const [header, ...rows] = await csvOf(response);
    expect(header).toEqual([...EXPORT_COLUMNS]);
    expect(rows.map((row) => row[0])).toEqual(calls.map((call) => call.id));
    expect(rows[0]).toEqual([
      calls[0]!.id,
      hyperlink.id,
      "'+14155550121",
      `'=HYPERLINK("http://evil.example","click")`,
      '1',
      'ended',
      'answered',
      '32000',
      '2026-03-01T09:00:00.000Z',
      '2026-03-01T09:00:32.000Z',
      'simulated',
      // The simulated carrier placed it: nobody was called (docs/configuration.md#simulators).
      'true',
      '{"note": "=1+1", "plan": "pro"}',
      '',
      '',
    ]);
    expect(JSON.parse(rows[0]![12]!)).toEqual({ plan: 'pro', note: '=1+1' });
    expect(rows[1]![3]).toBe("'+1");
    expect(rows[2]!.slice(3, 5)).toEqual([`'=HYPERLINK("http://evil.example","click")`, '2']);
    expect(rows[3]!.slice(2, 10)).toEqual([
      "'+14155550123",
      'Ana, "the" Boss\nsecond line',
      '1',
      'dialing',
      '',
      '',
      '2026-03-01T09:00:03.000Z',
      '',
    ]);

    const chosen = await post(campaign.id, { columns: ['leadName', 'callId'] });
    expect(await csvOf(chosen)).toEqual([
      ['leadName', 'callId'],
      ...calls.map((call, index) => [rows[index]![3], call.id]),
    ]);
  });

  it('returns XLSX with numbers as numbers and the same neutralisation', async () => {
    const campaign = await newCampaign();
    const lead = await addLead(campaign, { name: '@SUM(A1:A9)', fields: { source: '-2+3' } });
    const first = await addCall(lead, 1, at(10));
    const second = await addCall(lead, 2, at(20));

    const response = await post(campaign.id, { format: 'xlsx' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(XLSX);
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="calls-.+\.xlsx"$/);
    const [header, ...rows] = await xlsxOf(response);
    expect(header).toEqual([...EXPORT_COLUMNS]);
    expect(rows).toEqual(
      [first, second].map((call) => [
        call.id,
        lead.id,
        "'+14155550120",
        "'@SUM(A1:A9)",
        call.attempt,
        'ended',
        'answered',
        32_000,
        call.startedAt.toISOString(),
        call.endedAt!.toISOString(),
        'simulated',
        'true',
        '{"source": "-2+3"}',
        // evaluationScore and extractedFields are empty (no intelligence): a workbook row ends at its last value.
      ]),
    );
    // A cell starting with a tab is neutralised too, whatever follows.
    await addCall(await addLead(campaign, { name: '\tcmd' }), 1, at(30));
    const [, ...again] = await xlsxOf(await post(campaign.id, { format: 'xlsx', columns: ['leadName'] }));
    expect(again).toEqual([["'@SUM(A1:A9)"], ["'@SUM(A1:A9)"], ["'\tcmd"]]);
  });

  it("marks the simulated carrier's calls simulated, and no other (a twin's neither)", async () => {
    const campaign = await newCampaign();
    const simulated = await addCall(await addLead(campaign), 1, at(0));
    const twin = await addCall(await addLead(campaign, { phone: '+14155550124' }), 1, at(1));
    await db.call.update({ where: { id: twin.id }, data: { provider: 'twilio-twin' } });
    const response = await post(campaign.id, { columns: ['callId', 'provider', 'simulated'] });
    expect(await csvOf(response)).toEqual([
      ['callId', 'provider', 'simulated'],
      [simulated.id, 'simulated', 'true'],
      [twin.id, 'twilio-twin', 'false'],
    ]);
  });

  it('keeps to the date range: from inclusive, to exclusive, offsets honoured', async () => {
    const campaign = await newCampaign();
    const lead = await addLead(campaign);
    const calls = await Promise.all([0, 60, 120, 180].map((seconds, index) => addCall(lead, index + 1, at(seconds))));
    // 09:01 UTC written as 11:01 at +02:00.
    const response = await post(campaign.id, {
      from: '2026-03-01T11:01:00+02:00',
      to: '2026-03-01T09:03:00.000Z',
      columns: ['callId'],
    });
    expect(response.status).toBe(200);
    expect(await csvOf(response)).toEqual([['callId'], [calls[1]!.id], [calls[2]!.id]]);
    expect(await csvOf(await post(campaign.id, { from: '2026-03-01T09:03:00Z', columns: ['callId'] }))).toEqual([
      ['callId'],
      [calls[3]!.id],
    ]);
    expect(await csvOf(await post(campaign.id, { to: '2026-03-01T09:00:00Z', columns: ['callId'] }))).toEqual([
      ['callId'],
    ]);
  });

  it('refuses a bad body with 400 invalid_body', async () => {
    const campaign = await newCampaign();
    for (const body of [
      { format: 'pdf' },
      { columns: [] },
      { columns: ['callId', 'callId'] },
      { columns: ['secret'] },
      { from: 'yesterday' },
      { from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' },
      { colums: ['callId'] },
      [],
    ]) {
      const response = await post(campaign.id, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_body');
    }
  });
});

describe('who may export', () => {
  it('refuses a workspace without the basic plan with 403 plan_required, on every export endpoint', async () => {
    const none = await createTestWorkspace(db, { scopes: ['intel.view'], settings: { plan: 'none' } });
    const campaign = await newCampaign(none.workspaceId);
    for (const [method, pathname] of [
      ['POST', exportsOf(campaign.id)],
      ['GET', `${exportsOf(campaign.id)}/${randomUUID()}`],
      ['GET', `${exportsOf(campaign.id)}/${randomUUID()}/file`],
    ] as const) {
      const response = await api.request(method, pathname, { key: none.key, body: method === 'POST' ? {} : undefined });
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: 'plan_required', requiredPlan: 'basic' });
    }
    // The ai tier includes basic.
    const ai = await createTestWorkspace(db, { scopes: ['intel.view'], settings: { plan: 'ai' } });
    expect((await post((await newCampaign(ai.workspaceId)).id, {}, ai.key)).status).toBe(200);
  });

  it("needs intel.view, and answers another workspace's campaign, an unknown one and a foreign job with 403 forbidden", async () => {
    const viewer = await createTestWorkspace(db, { scopes: ['campaigns.view'], settings: { plan: 'basic' } });
    const refused = await post((await newCampaign(viewer.workspaceId)).id, {}, viewer.key);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'forbidden', requiredPermission: 'intel.view' });

    const other = await createTestWorkspace(db, { scopes: ['intel.view'], settings: { plan: 'basic' } });
    const theirs = await newCampaign(other.workspaceId);
    await insertCalls(theirs, 4, 3);
    const theirJob = ((await (await post(theirs.id, {}, other.key)).json()) as { job: Job }).job;
    for (const response of [
      await post(theirs.id),
      await post(randomUUID()),
      await post('not-a-uuid'),
      await api.request('GET', `${exportsOf(theirs.id)}/${theirJob.id}`, { key: owner.key }),
      await api.request('GET', `${exportsOf(theirs.id)}/${theirJob.id}/file`, { key: owner.key }),
    ]) {
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: 'forbidden' });
    }
    // Their job under one of our campaigns, and an id that is no job at all.
    const ours = await newCampaign();
    for (const exportId of [theirJob.id, randomUUID(), 'nope']) {
      const response = await api.request('GET', `${exportsOf(ours.id)}/${exportId}`, { key: owner.key });
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: 'forbidden' });
    }
  });
});

describe('exports over the inline threshold', () => {
  it('become a job: 202, progress to 100 %, then the file with its headers and every row', async () => {
    const campaign = await newCampaign();
    await insertCalls(campaign, 9, 3);
    const expected = await callIdsInOrder(campaign.id);
    expect(expected).toHaveLength(27);

    const job = await startedJob(campaign.id, {});
    expect(job).toMatchObject({
      status: 'queued',
      format: 'csv',
      rowsWritten: 0,
      totalRows: 27,
      percent: 0,
      downloadUrl: null,
      expiresAt: null,
      finishedAt: null,
      error: null,
    });
    const done = await until(
      () => jobStatus(campaign.id, job.id),
      (status) => status.status === 'completed',
    );
    expect(done).toMatchObject({
      rowsWritten: 27,
      totalRows: 27,
      percent: 100,
      downloadUrl: `${exportsOf(campaign.id)}/${job.id}/file`,
      error: null,
    });
    // Kept for the default retention, 24 hours from the end of the job.
    expect(Date.parse(done.expiresAt!) - Date.parse(done.finishedAt!)).toBe(24 * 3600 * 1000);
    const handle = temporal.client.workflow.getHandle(exportJobWorkflowId(job.id));
    expect(await handle.query(exportProgressQuery)).toEqual({
      rowsWritten: 27,
      totalRows: 27,
      percent: 100,
      status: 'completed',
    });

    const response = await api.request('GET', done.downloadUrl!, { key: owner.key });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(CSV);
    expect(response.headers.get('content-disposition')).toMatch(
      new RegExp(`^attachment; filename="calls-${campaign.id}-\\d{8}T\\d{6}Z\\.csv"$`),
    );
    const [header, ...rows] = await csvOf(response);
    expect(header).toEqual([...EXPORT_COLUMNS]);
    expect(rows.map((row) => row[0])).toEqual(expected);
    expect(rows[0]!.slice(2, 4)).toEqual(["'+14150000001", 'Lead 1']);
    expect(Number(response.headers.get('content-length'))).toBeGreaterThan(0);
    // The finished file is the only one left on the volume: the rows file was renamed into place.
    expect(readdirSync(defaultTestExportDir).filter((name) => name.startsWith(job.id))).toEqual([`${job.id}.csv`]);
  });

  it('reads smaller pages where lead fields are wide, and larger again after them: every row once, in order', async () => {
    const paged = await startTestApi({ db, url, temporal, exports: { inlineMaxRows: 0, pageRows: 4 } });
    const campaign = await newCampaign();
    await insertCalls(campaign, 8, 2);
    // 100 KB of fields on the first three leads: their pages shrink to 2 rows (EXPORT_PAGE_BYTES), then grow back to 4.
    const note = 'x'.repeat(100_000);
    await db.$executeRaw`UPDATE "Lead" SET fields = jsonb_build_object('note', ${note}::text) WHERE "campaignId" = ${campaign.id}::uuid AND name IN ('Lead 1', 'Lead 2', 'Lead 3')`;
    const job = await startedJob(campaign.id, { columns: ['callId', 'leadName', 'leadFields'] }, paged);
    const done = await until(
      () => jobStatus(campaign.id, job.id, paged),
      (status) => status.status === 'completed',
    );
    expect(done).toMatchObject({ rowsWritten: 16, totalRows: 16 });
    const [, ...rows] = await csvOf(await paged.request('GET', done.downloadUrl!, { key: owner.key }));
    const calls = await db.call.findMany({
      where: { campaignId: campaign.id },
      orderBy: [{ startedAt: 'asc' }, { id: 'asc' }],
      include: { lead: true },
    });
    expect(rows.map(([callId, leadName, fields]) => [callId, leadName, JSON.parse(fields!)])).toEqual(
      calls.map((call) => [call.id, call.lead!.name, call.lead!.fields]),
    );
    expect(rows.filter((row) => JSON.parse(row[2]!).note === note)).toHaveLength(6);
  });

  it('packages a workbook for XLSX from the rows it wrote', async () => {
    const campaign = await newCampaign();
    await insertCalls(campaign, 5, 3);
    const job = await startedJob(campaign.id, { format: 'xlsx', columns: ['callId', 'attempt', 'leadName'] });
    const done = await until(
      () => jobStatus(campaign.id, job.id),
      (status) => status.status === 'completed',
    );
    expect(done).toMatchObject({ format: 'xlsx', rowsWritten: 15, totalRows: 15, percent: 100 });
    const response = await api.request('GET', done.downloadUrl!, { key: owner.key });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(XLSX);
    expect(response.headers.get('content-disposition')).toMatch(/\.xlsx"$/);
    const [header, ...rows] = await xlsxOf(response);
    expect(header).toEqual(['callId', 'attempt', 'leadName']);
    const calls = await db.call.findMany({
      where: { campaignId: campaign.id },
      orderBy: [{ startedAt: 'asc' }, { id: 'asc' }],
      include: { lead: true },
    });
    expect(rows).toEqual(calls.map((call) => [call.id, call.attempt, call.lead!.name]));
    expect(readdirSync(defaultTestExportDir).filter((name) => name.startsWith(job.id))).toEqual([`${job.id}.xlsx`]);
  });

  it('answers 409 export_not_ready while no worker has written the file', async () => {
    // A task queue no worker polls: the job stays queued.
    const idle = await startTestApi({
      db,
      url,
      temporal: { ...temporal, taskQueue: uniqueTaskQueue('idle') },
      exports: { inlineMaxRows: 0 },
    });
    const campaign = await newCampaign();
    await addCall(await addLead(campaign), 1, at(0));
    const job = await startedJob(campaign.id, {}, idle);
    const response = await idle.request('GET', `${exportsOf(campaign.id)}/${job.id}/file`, { key: owner.key });
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({ error: 'export_not_ready', status: 'queued', percent: 0 });
    await temporal.client.workflow.getHandle(exportJobWorkflowId(job.id)).terminate('test over');
  });

  it('runs its activities on the export task queue only: queued while no export worker polls it, completed once one does', async () => {
    const exportQueue = uniqueTaskQueue('exports-later');
    const routed = await startTestApi({ db, url, temporal, exports: { inlineMaxRows: 0, taskQueue: exportQueue } });
    const campaign = await newCampaign();
    await insertCalls(campaign, 3, 2);
    const job = await startedJob(campaign.id, {}, routed);
    const handle = temporal.client.workflow.getHandle(exportJobWorkflowId(job.id));

    // The main worker runs the workflow, which schedules its first activity on the export queue...
    const scheduled = await until(
      async () =>
        (await handle.fetchHistory()).events!.map((event) => event.activityTaskScheduledEventAttributes).find(Boolean),
      (attributes) => attributes !== undefined,
    );
    expect(scheduled).toMatchObject({ activityType: { name: 'beginExport' }, taskQueue: { name: exportQueue } });
    // ...where nothing takes it: not the main worker, not the export worker of the other queue.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const [pending] = (await handle.describe()).raw.pendingActivities ?? [];
    expect(pending).toMatchObject({ activityType: { name: 'beginExport' }, attempt: 1 });
    expect(decodePendingActivityState(pending?.state)).toBe('SCHEDULED');
    expect(await jobStatus(campaign.id, job.id, routed)).toMatchObject({
      status: 'queued',
      rowsWritten: 0,
      percent: 0,
    });

    await startTestExportWorker(exportQueue, { sql });
    const done = await until(
      () => jobStatus(campaign.id, job.id, routed),
      (status) => status.status === 'completed',
    );
    expect(done).toMatchObject({ rowsWritten: 6, totalRows: 6, percent: 100 });
    const [, ...rows] = await csvOf(await routed.request('GET', done.downloadUrl!, { key: owner.key }));
    expect(rows.map((row) => row[0])).toEqual(await callIdsInOrder(campaign.id));
    // Every activity of the job went to the export queue.
    const queues = (await handle.fetchHistory()).events!.flatMap(
      (event) => event.activityTaskScheduledEventAttributes?.taskQueue?.name ?? [],
    );
    expect(queues.length).toBeGreaterThanOrEqual(3);
    expect(new Set(queues)).toEqual(new Set([exportQueue]));
    await handle.terminate('test over');
  });

  it('deletes the file when its retention is over, and the download answers 410 export_expired', async () => {
    const shortLived = await startTestApi({ db, url, temporal, exports: { inlineMaxRows: 0, retentionSeconds: 3 } });
    const campaign = await newCampaign();
    await insertCalls(campaign, 2, 1);
    const job = await startedJob(campaign.id, {}, shortLived);
    const done = await until(
      () => jobStatus(campaign.id, job.id, shortLived),
      (status) => status.status === 'completed',
    );
    expect(Date.parse(done.expiresAt!) - Date.parse(done.finishedAt!)).toBe(3_000);
    const file = path.join(defaultTestExportDir, `${job.id}.csv`);
    expect(existsSync(file)).toBe(true);
    expect((await shortLived.request('GET', done.downloadUrl!, { key: owner.key })).status).toBe(200);

    // The workflow's own timer deletes the file and marks the job.
    expect(await temporal.client.workflow.getHandle(exportJobWorkflowId(job.id)).result()).toBe('expired');
    expect(existsSync(file)).toBe(false);
    expect(await db.exportJob.findUniqueOrThrow({ where: { id: job.id } })).toMatchObject({
      status: 'expired',
      filePath: null,
    });
    expect(await jobStatus(campaign.id, job.id, shortLived)).toMatchObject({
      status: 'expired',
      downloadUrl: null,
      percent: 100,
    });
    const gone = await shortLived.request('GET', done.downloadUrl!, { key: owner.key });
    expect(gone.status).toBe(410);
    expect(await gone.json()).toEqual({ error: 'export_expired', expiresAt: done.expiresAt });
  });
});

describe('an export job and an export worker killed with SIGKILL', () => {
  const crashQueue = uniqueTaskQueue('exports-crash');
  /**
   * The production export worker entry point, as its own process, sharing the API's export volume. Given
   * only the main task queue, it polls the export queue the configuration derives from it. Killed when the
   * test that started it finishes.
   */
  function startExportWorkerProcess(): ChildProcess {
    return startEntryPoint(
      'worker/export-worker.ts',
      {
        DATABASE_URL: url,
        TEMPORAL_ADDRESS: inject('stack').temporalAddress,
        TEMPORAL_TASK_QUEUE: crashQueue,
        EXPORT_TASK_QUEUE: undefined,
        EXPORT_DIR: defaultTestExportDir,
      },
      { output: 'ignore' },
    ).child;
  }

  it('resumes from its last checkpoint: exactly every row, once, in order', async () => {
    // The workflow runs on a main worker in this process; the rows are written by the export worker process alone.
    const crashApi = await startTestApi({
      db,
      url,
      temporal: { ...temporal, taskQueue: crashQueue },
      exports: { inlineMaxRows: 10, pageRows: 200 },
    });
    await startTestWorker(crashQueue, { db, ...carrierDependencies(carrier, crashApi) });
    const campaign = await newCampaign();
    await insertCalls(campaign, 20_000, 3);
    const first = startExportWorkerProcess();
    const job = await startedJob(campaign.id, {}, crashApi);
    expect(job.totalRows).toBe(60_000);

    // Killed once it has written a few pages, long before the end, with a checkpoint on the server (the chunk's first
    // heartbeat: a loaded worker may write pages before it reaches Temporal) and rows written past it.
    const handle = temporal.client.workflow.getHandle(exportJobWorkflowId(job.id));
    const heartbeatRows = async () => {
      const [chunk] = (await handle.describe()).raw.pendingActivities ?? [];
      const details = chunk?.heartbeatDetails?.payloads?.[0]?.data;
      return details ? (JSON.parse(Buffer.from(details).toString()) as { rows: number }).rows : 0;
    };
    const checkpointed = await until(heartbeatRows, (rows) => rows > 0, 60_000);
    const atKill = await until(
      () => db.exportJob.findUniqueOrThrow({ where: { id: job.id } }),
      (row) => row.rowsWritten >= Math.max(1_000, checkpointed + 1),
      60_000,
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const written = (await db.exportJob.findUniqueOrThrow({ where: { id: job.id } })).rowsWritten;
    expect(atKill.rowsWritten).toBeLessThan(60_000);
    expect(written).toBeLessThan(60_000);
    const notReady = await crashApi.request('GET', `${exportsOf(campaign.id)}/${job.id}/file`, { key: owner.key });
    expect(notReady.status).toBe(409);
    expect(await notReady.json()).toMatchObject({ error: 'export_not_ready', status: 'running' });
    // While no export worker runs it, Temporal holds the chunk's last heartbeat: the checkpoint the retry resumes from.
    const [pending] = (await handle.describe()).raw.pendingActivities ?? [];
    expect(pending?.activityType?.name).toBe('writeExportChunk');
    const checkpoint = JSON.parse(Buffer.from(pending!.heartbeatDetails!.payloads![0]!.data!).toString()) as {
      rows: number;
      bytes: number;
    };
    expect(checkpoint.rows).toBeGreaterThan(0);
    expect(checkpoint.rows).toBeLessThanOrEqual(written);
    // The file holds rows past the checkpoint (heartbeats reach the server at most every 16 s): the retry must cut them away.
    const file = path.join(defaultTestExportDir, `${job.id}.csv.part`);
    const partial = readFileSync(file);
    expect(partial.length).toBeGreaterThan(checkpoint.bytes);
    // A mark before the checkpoint: a resumed attempt keeps these bytes, one that started over would rewrite them.
    const mark = partial.indexOf(',Lead 1,');
    expect(mark).toBeGreaterThan(0);
    expect(mark).toBeLessThan(checkpoint.bytes);
    writeFileSync(
      file,
      Buffer.concat([partial.subarray(0, mark), Buffer.from(',LEAD 1,'), partial.subarray(mark + 8)]),
    );

    startExportWorkerProcess();
    const done = await until(
      () => jobStatus(campaign.id, job.id, crashApi),
      (status) => status.status === 'completed',
      100_000,
    );
    expect(done).toMatchObject({ rowsWritten: 60_000, totalRows: 60_000, percent: 100 });
    // The same activity, retried after its heartbeat timed out, not a new one started from the beginning.
    const history = await handle.fetchHistory();
    const retried = history
      .events!.map((event) => event.activityTaskStartedEventAttributes)
      .find((started) => (started?.attempt ?? 1) > 1);
    expect(decodeTimeoutType(retried?.lastFailure?.timeoutFailureInfo?.timeoutType)).toBe('HEARTBEAT');

    const response = await crashApi.request('GET', done.downloadUrl!, { key: owner.key });
    expect(response.status).toBe(200);
    const [header, ...rows] = await csvOf(response);
    expect(header).toEqual([...EXPORT_COLUMNS]);
    expect(rows).toHaveLength(60_000);
    expect(rows.map((row) => row[0])).toEqual(await callIdsInOrder(campaign.id));
    expect(rows[0]![3]).toBe('LEAD 1');
    // Lead 1's other two calls, written after the mark.
    expect(rows.filter((row) => row[3] === 'Lead 1')).toHaveLength(2);
  }, 150_000);
});
