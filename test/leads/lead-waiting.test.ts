// What a lead waits for (docs/features/dial-ladder.md#what-a-lead-waits-for), as results show it: the ladder's
// columns ("Lead"."waitingFor", "nextAttemptAt") and the campaign's line queue are set here directly, one state at
// a time, and read back through GET /v1/results/{leadId}, GET /v1/results and GET /campaigns/{id}/leads. Every
// answer is checked against the routes' declarations (the OpenAPI description) by api.request.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Prisma } from '../../generated/prisma/client';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, QUICK_LADDER } from '../support/ladders';
import { uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient(uniqueTaskQueue('lead-waiting'));
// No worker: nothing here runs a lead's workflow; the rows say what the ladder would have written.
const api = await startTestApi({ db, url, temporal });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.view'] });

async function get(path: string) {
  const response = await api.request('GET', path, { key: owner.key });
  expect(response.status).toBe(200);
  return (await response.json()) as any;
}

async function newCampaign(data: Partial<Prisma.CampaignUncheckedCreateInput> = {}) {
  return db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Waiting',
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder: QUICK_LADDER,
      callingWindow: ALWAYS_OPEN,
      ...data,
    },
  });
}

let created = 0;
/** A lead as its push stores it, then its ladder's columns as given; created one second apart, oldest first. */
async function addLead(
  campaignId: string,
  columns: Pick<Prisma.LeadUncheckedCreateInput, 'status' | 'waitingFor' | 'nextAttemptAt'> = {},
) {
  created += 1;
  return db.lead.create({
    data: {
      workspaceId: owner.workspaceId,
      campaignId,
      idempotencyKey: randomUUID(),
      phone: `+1415555${String(1000 + created).padStart(4, '0')}`,
      workflowId: `not-started-${randomUUID()}`,
      requestId: randomUUID(),
      createdAt: new Date(Date.parse('2026-03-01T09:00:00.000Z') + created * 1000),
      ...columns,
    },
  });
}

/** An entry of a campaign's line queue, in the order of the calls (seq is the table's sequence). */
async function enqueue(lead: { id: string; campaignId: string }, attempt: number, grantedAt: Date | null = null) {
  await db.lineQueue.create({
    data: {
      campaignId: lead.campaignId,
      leadId: lead.id,
      attemptId: `${lead.id}:${attempt}`,
      workflowId: `not-started-${lead.id}`,
      grantedAt,
    },
  });
}

const IN_TWO_HOURS = new Date('2026-03-01T11:00:00.000Z');
const AT_NINE = new Date('2026-03-02T14:00:00.000Z');

afterEach(() => {
  vi.restoreAllMocks();
});

describe('what a lead waits for, in its result', () => {
  it('tells a lead on a call from one waiting out its next rung, with when its next attempt is due', async () => {
    const campaign = await newCampaign();
    const onCall = await addLead(campaign.id, { status: 'dialing' });
    await db.call.create({
      data: {
        workspaceId: owner.workspaceId,
        campaignId: campaign.id,
        leadId: onCall.id,
        attempt: 1,
        attemptId: `${onCall.id}:1`,
        provider: 'simulated',
        status: 'dialing',
        startedAt: new Date(),
      },
    });
    const rung = await addLead(campaign.id, { status: 'dialing', waitingFor: 'rung', nextAttemptAt: IN_TWO_HOURS });

    expect(await get(`/v1/results/${onCall.id}`)).toMatchObject({ status: 'dialing', waiting: null, attempts: 1 });
    expect(await get(`/v1/results/${rung.id}`)).toMatchObject({
      status: 'dialing',
      waiting: { for: 'rung', nextAttemptAt: '2026-03-01T11:00:00.000Z', linePosition: null },
    });
  });

  it('shows the calling window with its opening, and a campaign not running with no time', async () => {
    const campaign = await newCampaign({ status: 'PAUSED' });
    const window = await addLead(campaign.id, { waitingFor: 'calling_window', nextAttemptAt: AT_NINE });
    // A time left behind by an earlier wait is not shown: a campaign's resume has no known time.
    const held = await addLead(campaign.id, { waitingFor: 'campaign', nextAttemptAt: IN_TWO_HOURS });
    const prepared = await addLead(campaign.id);

    expect(await get(`/v1/results/${window.id}`)).toMatchObject({
      status: 'queued',
      waiting: { for: 'calling_window', nextAttemptAt: '2026-03-02T14:00:00.000Z', linePosition: null },
    });
    expect((await get(`/v1/results/${held.id}`)).waiting).toEqual({
      for: 'campaign',
      nextAttemptAt: null,
      linePosition: null,
    });
    expect((await get(`/v1/results/${prepared.id}`)).waiting).toBeNull();
  });

  it("gives a lead waiting for a line its place in its campaign's queue, counting only entries not yet granted", async () => {
    const campaign = await newCampaign({ maxConcurrentCalls: 1 });
    const other = await newCampaign();
    const granted = await addLead(campaign.id, { status: 'dialing', waitingFor: 'line' });
    const [first, second, third] = [
      await addLead(campaign.id, { waitingFor: 'line' }),
      await addLead(campaign.id, { status: 'dialing', waitingFor: 'line' }),
      await addLead(campaign.id, { waitingFor: 'line' }),
    ];
    const elsewhere = await addLead(other.id, { waitingFor: 'line' });
    await enqueue(granted, 2, new Date());
    await enqueue(first, 1);
    await enqueue(elsewhere, 1);
    await enqueue(second, 3);
    await enqueue(third, 1);

    const waiting = async (lead: { id: string }) => (await get(`/v1/results/${lead.id}`)).waiting;
    expect(await waiting(first)).toEqual({ for: 'line', nextAttemptAt: null, linePosition: 1 });
    expect(await waiting(second)).toEqual({ for: 'line', nextAttemptAt: null, linePosition: 2 });
    expect(await waiting(third)).toEqual({ for: 'line', nextAttemptAt: null, linePosition: 3 });
    expect(await waiting(elsewhere)).toEqual({ for: 'line', nextAttemptAt: null, linePosition: 1 });
    // Handed a line and about to dial: still waiting for a line in its row, but no longer in the queue.
    expect(await waiting(granted)).toEqual({ for: 'line', nextAttemptAt: null, linePosition: null });

    // The first one gets the line: everyone behind it moves up.
    await db.lineQueue.update({ where: { attemptId: `${first.id}:1` }, data: { grantedAt: new Date() } });
    expect((await waiting(second)).linePosition).toBe(1);
    expect((await waiting(third)).linePosition).toBe(2);
  });

  it('lists the positions of a page in one query, counting the entries ahead that are not on the page', async () => {
    const campaign = await newCampaign({ maxConcurrentCalls: 1 });
    const queued = [];
    for (let index = 0; index < 5; index += 1) {
      const lead = await addLead(campaign.id, { waitingFor: 'line' });
      await enqueue(lead, 1);
      queued.push(lead);
    }
    const rung = await addLead(campaign.id, { status: 'dialing', waitingFor: 'rung', nextAttemptAt: IN_TWO_HOURS });
    const done = await addLead(campaign.id, { status: 'completed' });

    const queries = vi.spyOn(db, '$queryRaw');
    // Newest first: done, rung, then the queue from its tail; the queue's head is on the next pages.
    const page = await get(`/v1/results?campaignId=${campaign.id}&limit=4`);
    expect(queries).toHaveBeenCalledTimes(1);
    expect(page.items.map((item: any) => [item.leadId, item.waiting])).toEqual([
      [done.id, null],
      [rung.id, { for: 'rung', nextAttemptAt: '2026-03-01T11:00:00.000Z', linePosition: null }],
      [queued[4]!.id, { for: 'line', nextAttemptAt: null, linePosition: 5 }],
      [queued[3]!.id, { for: 'line', nextAttemptAt: null, linePosition: 4 }],
    ]);
    const next = await get(`/v1/results?campaignId=${campaign.id}&limit=4&cursor=${page.nextCursor}`);
    expect(next.items.map((item: any) => item.waiting?.linePosition)).toEqual([3, 2, 1]);
    expect(queries).toHaveBeenCalledTimes(2);

    const leads = await get(`/campaigns/${campaign.id}/leads?limit=10`);
    expect(leads.items.map((item: any) => item.waiting?.linePosition ?? null)).toEqual([null, null, 5, 4, 3, 2, 1]);
    expect(queries).toHaveBeenCalledTimes(3);

    // A page where no lead waits for a line reads no queue.
    await get(`/v1/results?campaignId=${campaign.id}&limit=1`);
    expect(queries).toHaveBeenCalledTimes(3);
  });

  it('never shows a wait for a finished lead, nor for a JOURNEY or WHATSAPP campaign’s lead', async () => {
    const classic = await newCampaign();
    const journey = await newCampaign({ kind: 'JOURNEY', dialLadder: undefined, callingWindow: undefined });
    const whatsapp = await newCampaign({ channel: 'WHATSAPP' });
    const finished = [
      await addLead(classic.id, { status: 'completed', waitingFor: 'rung', nextAttemptAt: IN_TWO_HOURS }),
      await addLead(classic.id, { status: 'failed', waitingFor: 'line' }),
      await addLead(classic.id, { status: 'cancelled', waitingFor: 'campaign' }),
    ];
    await enqueue(finished[1]!, 1);
    const others = [
      await addLead(journey.id, { waitingFor: 'rung', nextAttemptAt: IN_TWO_HOURS }),
      await addLead(whatsapp.id, { waitingFor: 'line' }),
    ];
    await enqueue(others[1]!, 1);
    for (const lead of [...finished, ...others]) expect((await get(`/v1/results/${lead.id}`)).waiting).toBeNull();
    const whatsappResult = await get(`/v1/results/${others[1]!.id}`);
    expect(whatsappResult).toMatchObject({ waiting: null, message: null });
  });

  it('describes the field in the OpenAPI description', async () => {
    const description = await get('/v1/openapi.json');
    const result = description.paths['/v1/results/{leadId}'].get.responses['200'].content['application/json'].schema;
    const resolve = (schema: any): any =>
      schema?.$ref ? resolve(description.components.schemas[schema.$ref.split('/').at(-1)]) : schema;
    const waiting = resolve(resolve(result).properties.waiting);
    const object = resolve(waiting.anyOf?.find((option: any) => option.type !== 'null') ?? waiting);
    expect(object.properties.for.enum).toEqual(['rung', 'calling_window', 'line', 'campaign']);
    expect(Object.keys(object.properties)).toEqual(['for', 'nextAttemptAt', 'linePosition']);
    expect(resolve(result).required).toContain('waiting');
  });
});
