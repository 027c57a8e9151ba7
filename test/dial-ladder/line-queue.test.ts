import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  endCall,
  handOutFreeLines,
  leaveLineQueue,
  resumeOrWithdraw,
  takeLine,
  type GrantedLine,
} from '../../lib/calls/call-lines';
import { endLostCall } from '../../lib/calls/call-end';
import { prismaSql } from '../../lib/run-sql';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { leadResult } from '../support/lead-workflows';
import { until } from '../support/until';
import { transitionCampaign } from '../support/campaign-transition';

/*
 * The line queue (docs/features/dial-ladder.md#lines-handed-out): first its statements on PostgreSQL, each way a
 * line is given back handing it to the first waiting entry; then the whole path on the real servers.
 */

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
/** Answered calls of 36 s simulated time in 3.6 s: long enough to look at a queue while its line is busy. */
const carrier = await startTestCarrier(db, { timeScale: 0.1 });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
const sql = prismaSql(db);

const campaignWith = (maxConcurrentCalls: number, status: 'RUNNING' | 'DRAFT' = 'RUNNING') =>
  db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Queue',
      acceptsLeadPush: true,
      status,
      dialLadder: SINGLE_ATTEMPT,
      callingWindow: ALWAYS_OPEN,
      maxConcurrentCalls,
    },
  });

const leadOf = (campaignId: string, phone = '+14155550120') =>
  db.lead.create({
    data: {
      workspaceId: owner.workspaceId,
      campaignId,
      idempotencyKey: randomUUID(),
      phone,
      workflowId: `queue-${randomUUID()}`,
      requestId: randomUUID(),
    },
  });

/** An attempt by a workflow (its id makes it join the queue when it finds no line). */
const attempt = (lead: { id: string; workflowId: string }) =>
  takeLine(db.sql, {
    leadId: lead.id,
    attempt: 1,
    attemptId: `${lead.id}:1`,
    provider: 'simulated',
    workflowId: lead.workflowId,
  });

const inFlight = async (campaignId: string) =>
  (await db.campaign.findUniqueOrThrow({ where: { id: campaignId } })).callsInFlight;
const grantedLeads = (granted: readonly GrantedLine[]) => granted.map((line) => line.leadId);

describe('the line queue, statement by statement', () => {
  it('queues attempts that find no line in order, and hands a line given back to the first of them', async () => {
    const campaign = await campaignWith(1);
    const [first, second, third] = [await leadOf(campaign.id), await leadOf(campaign.id), await leadOf(campaign.id)];
    expect((await attempt(first))?.verdict).toBe('started');
    expect((await attempt(second))?.verdict).toBe('queued');
    expect((await attempt(third))?.verdict).toBe('queued');
    expect(await db.lead.findUniqueOrThrow({ where: { id: second.id } })).toMatchObject({ waitingFor: 'line' });
    // Asking again keeps the place; nobody jumps the queue while someone waits, even with a line free.
    expect((await attempt(third))?.verdict).toBe('queued');
    expect(
      (await db.lineQueue.findMany({ where: { campaignId: campaign.id }, orderBy: { seq: 'asc' } })).map(
        (entry) => entry.leadId,
      ),
    ).toEqual([second.id, third.id]);

    const ended = await endCall(db, `${first.id}:1`, { providerCallId: 'sim_1', outcome: 'answered', durationMs: 1 });
    expect(grantedLeads(ended.handedOver)).toEqual([second.id]);
    expect(ended.handedOver[0]).toMatchObject({
      workflowId: second.workflowId,
      byPush: false,
      attemptId: `${second.id}:1`,
    });
    // The line passed on: still counted, now the second's, which no newcomer may take.
    expect(await inFlight(campaign.id)).toBe(1);
    const newcomer = await leadOf(campaign.id);
    expect((await attempt(newcomer))?.verdict).toBe('queued');
    expect((await attempt(third))?.verdict).toBe('queued');
    const granted = await attempt(second);
    expect(granted).toMatchObject({ verdict: 'started', granted: true });
    expect(granted?.call).toMatchObject({ hasLead: true, leadFields: {} });
    expect(await inFlight(campaign.id)).toBe(1);
    expect(await db.lineQueue.count({ where: { leadId: second.id } })).toBe(0);
    expect(await db.lead.findUniqueOrThrow({ where: { id: second.id } })).toMatchObject({
      status: 'dialing',
      waitingFor: null,
    });
    // Ending it twice hands over one line only.
    expect(
      grantedLeads(
        (await endCall(db, `${second.id}:1`, { providerCallId: null, outcome: 'busy', durationMs: null })).handedOver,
      ),
    ).toEqual([third.id]);
    expect(
      (await endCall(db, `${second.id}:1`, { providerCallId: null, outcome: 'busy', durationMs: null })).handedOver,
    ).toEqual([]);
    expect(await inFlight(campaign.id)).toBe(1);
  });

  it('hands on the line of a lost call, of a queued number put on the Do-Not-Call list and of a lead whose window closed', async () => {
    const campaign = await campaignWith(1);
    const leads = [];
    for (let index = 0; index < 4; index++) leads.push(await leadOf(campaign.id, `+1415555014${index}`));
    const [calling, blocked, outsideWindow, last] = leads as [
      (typeof leads)[0],
      (typeof leads)[0],
      (typeof leads)[0],
      (typeof leads)[0],
    ];
    expect((await attempt(calling))?.verdict).toBe('started');
    for (const lead of [blocked, outsideWindow, last]) expect((await attempt(lead))?.verdict).toBe('queued');

    // A call nobody accounts for ends failed, and its line goes to the first in the queue.
    expect(grantedLeads((await endLostCall(db, `${calling.id}:1`)).handedOver)).toEqual([blocked.id]);
    // That number went on the list meanwhile: the attempt is refused and hands the line on.
    await db.doNotCall.create({ data: { workspaceId: owner.workspaceId, phone: blocked.phone, source: 'api' } });
    expect(await attempt(blocked)).toMatchObject({ verdict: 'do_not_call', granted: true });
    expect(grantedLeads(await leaveLineQueue(sql, `${blocked.id}:1`))).toEqual([outsideWindow.id]);
    // Its window closed before it dialed: it leaves the queue, says when it tries again, and hands the line on.
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const handed = await leaveLineQueue(sql, `${outsideWindow.id}:1`, {
      leadId: outsideWindow.id,
      waitingFor: 'calling_window',
      nextAttemptAt: at,
    });
    expect(grantedLeads(handed)).toEqual([last.id]);
    expect(await db.lead.findUniqueOrThrow({ where: { id: outsideWindow.id } })).toMatchObject({
      waitingFor: 'calling_window',
      nextAttemptAt: new Date(at),
    });
    expect(await inFlight(campaign.id)).toBe(1);
    expect(await db.lineQueue.findMany({ where: { campaignId: campaign.id } })).toMatchObject([
      { leadId: last.id, grantedAt: expect.any(Date) },
    ]);
  });

  it('gives back a withdrawn dial of a paused campaign without handing it on, and hands free lines out on a resume or a raised cap', async () => {
    const campaign = await campaignWith(1);
    const [dialing, waiting, later] = [await leadOf(campaign.id), await leadOf(campaign.id), await leadOf(campaign.id)];
    expect((await attempt(dialing))?.verdict).toBe('started');
    expect((await attempt(waiting))?.verdict).toBe('queued');
    expect((await attempt(later))?.verdict).toBe('queued');
    await db.campaign.update({ where: { id: campaign.id }, data: { status: 'PAUSED' } });
    expect(await resumeOrWithdraw(db, { leadId: dialing.id, attemptId: `${dialing.id}:1` })).toMatchObject({
      verdict: 'campaign_on_hold',
      handedOver: [],
    });
    expect(await inFlight(campaign.id)).toBe(0);
    // Paused: asking for a line keeps the place and waits for the campaign.
    expect((await attempt(waiting))?.verdict).toBe('campaign_on_hold');
    expect(await db.lead.findUniqueOrThrow({ where: { id: waiting.id } })).toMatchObject({ waitingFor: 'campaign' });
    expect(await handOutFreeLines(sql, campaign.id)).toEqual([]);

    await db.campaign.update({ where: { id: campaign.id }, data: { status: 'RUNNING' } });
    expect(grantedLeads(await handOutFreeLines(sql, campaign.id))).toEqual([waiting.id]);
    expect(await inFlight(campaign.id)).toBe(1);
    expect(await handOutFreeLines(sql, campaign.id)).toEqual([]);
    await db.campaign.update({ where: { id: campaign.id }, data: { maxConcurrentCalls: 3 } });
    // The withdrawn dial took its line directly, so it has no place in the queue: the raised cap goes to the next.
    expect(grantedLeads(await handOutFreeLines(sql, campaign.id))).toEqual([later.id]);
  });

  it('gives back, without handing on, lines above a lowered cap', async () => {
    const campaign = await campaignWith(2);
    const leads = [await leadOf(campaign.id), await leadOf(campaign.id), await leadOf(campaign.id)];
    expect((await attempt(leads[0]!))?.verdict).toBe('started');
    expect((await attempt(leads[1]!))?.verdict).toBe('started');
    expect((await attempt(leads[2]!))?.verdict).toBe('queued');
    await db.campaign.update({ where: { id: campaign.id }, data: { maxConcurrentCalls: 1 } });
    const first = await endCall(db, `${leads[0]!.id}:1`, { providerCallId: null, outcome: 'answered', durationMs: 1 });
    expect(first.handedOver).toEqual([]);
    expect(await inFlight(campaign.id)).toBe(1);
    const second = await endCall(db, `${leads[1]!.id}:1`, { providerCallId: null, outcome: 'answered', durationMs: 1 });
    expect(grantedLeads(second.handedOver)).toEqual([leads[2]!.id]);
    expect(await inFlight(campaign.id)).toBe(1);
  });
});

describe('the line queue on the real servers', () => {
  it('dials a batch on one line first pushed, first dialed, each taking the line its predecessor gave back; results give each its place', async () => {
    const campaign = await campaignWith(1);
    const keys = Array.from({ length: 4 }, (_, index) => `fifo-${index}-${randomUUID()}`);
    const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
      key: owner.key,
      body: { leads: keys.map((idempotencyKey) => ({ lead: { phone: '+14155550100' }, idempotencyKey })) },
    });
    expect(response.status).toBe(200);
    const leads = await db.lead.findMany({ where: { campaignId: campaign.id } });
    const byKey = new Map(leads.map((lead) => [lead.idempotencyKey, lead]));
    // While the first talks (3.6 s), the others wait in order.
    const listed = await api.request('GET', `/v1/results?campaignId=${campaign.id}`, { key: owner.key });
    const results = (
      (await listed.json()) as {
        items: Array<{ leadId: string; waiting: { for: string; linePosition: number | null } | null }>;
      }
    ).items;
    const placeOf = (key: string) => results.find((result) => result.leadId === byKey.get(key)!.id)?.waiting;
    expect(keys.slice(1).map(placeOf)).toEqual([
      { for: 'line', nextAttemptAt: null, linePosition: 1 },
      { for: 'line', nextAttemptAt: null, linePosition: 2 },
      { for: 'line', nextAttemptAt: null, linePosition: 3 },
    ]);
    for (const key of keys)
      expect(await leadResult(temporal.client, campaign.id, key)).toMatchObject({ status: 'completed' });
    const calls = await db.call.findMany({ where: { campaignId: campaign.id }, orderBy: { startedAt: 'asc' } });
    expect(calls.map((call) => call.leadId)).toEqual(keys.map((key) => byKey.get(key)!.id));
    // One line: each call started after the one before it ended.
    for (let index = 1; index < calls.length; index++)
      expect(calls[index]!.startedAt.getTime()).toBeGreaterThanOrEqual(calls[index - 1]!.endedAt!.getTime());
    expect(carrier.server.maxLiveCalls).toBeLessThanOrEqual(1);
    expect(await inFlight(campaign.id)).toBe(0);
    expect(await db.lineQueue.count({ where: { campaignId: campaign.id } })).toBe(0);
  }, 180_000);

  it('a start and a raised cap hand lines to the queue at once; a stop ends every queued lead cancelled and empties the queue', async () => {
    const campaign = await campaignWith(1, 'DRAFT');
    const keys = Array.from({ length: 5 }, () => randomUUID());
    await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
      key: owner.key,
      body: { leads: keys.map((idempotencyKey) => ({ lead: { phone: '+14155550100' }, idempotencyKey })) },
    });
    expect(await transitionCampaign(api, owner.key, campaign.id, 'start')).toMatchObject({ status: 'RUNNING' });
    const raised = await api.request('PATCH', `/campaigns/${campaign.id}`, {
      key: owner.key,
      body: { maxConcurrentCalls: 3 },
    });
    expect(raised.status).toBe(200);
    // The raise handed two more lines out before it answered: three counted at once, the queue shorter by two.
    expect(await inFlight(campaign.id)).toBe(3);
    expect(await db.lineQueue.count({ where: { campaignId: campaign.id, grantedAt: null } })).toBeLessThanOrEqual(2);
    await until(
      () => db.call.count({ where: { campaignId: campaign.id } }),
      (count) => count >= 3,
    );
    expect(await transitionCampaign(api, owner.key, campaign.id, 'stop')).toMatchObject({ status: 'STOPPED' });
    // Those still queued at the stop, never handed a line, end cancelled without a call and without a workflow; the
    // others end by their workflows, with their one call, hung up or over.
    const leads = await db.lead.findMany({ where: { campaignId: campaign.id } });
    const neverStarted = leads.filter((lead) => lead.settledWithoutWorkflowAt !== null);
    expect(neverStarted.every((lead) => lead.status === 'cancelled' && lead.workflowStartedAt === null)).toBe(true);
    const results = await Promise.all(
      leads
        .filter((lead) => lead.settledWithoutWorkflowAt === null)
        .map((lead) => leadResult(temporal.client, campaign.id, lead.idempotencyKey)),
    );
    const stopped = results.filter((result) => result.outcome === 'campaign_stopped');
    expect(stopped.every((result) => result.status === 'cancelled')).toBe(true);
    expect(
      results.filter((result) => result.outcome !== 'campaign_stopped').every((result) => result.attempts === 1),
    ).toBe(true);
    expect(await db.call.count({ where: { campaignId: campaign.id } })).toBe(5 - stopped.length - neverStarted.length);
    expect(await db.lineQueue.count({ where: { campaignId: campaign.id } })).toBe(0);
    await until(
      () => inFlight(campaign.id),
      (count) => count === 0,
    );
  }, 180_000);
});
