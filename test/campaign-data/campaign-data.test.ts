import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { contactLeadKey } from '../../activities/dial-ladder/enrollment';
import { trimApiLogs } from '../../api/campaign-data/api-logs';
import { createSqlPool } from '../../lib/sql-pool';
import type { DialLadder } from '../../lib/dial-ladder/dial-ladder';
import { leadWorkflowId } from '../../lib/temporal/workflow-ids';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { leadResult } from '../support/lead-workflows';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { LEAD_LADDER_WORKFLOW } from '../../lib/temporal/workflow-contracts';
import { transitionCampaign } from '../support/campaign-transition';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(await startTestCarrier(db), api) });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view', 'campaigns.delete'] });
const request = (method: string, path: string, body?: unknown) => api.request(method, path, { key: owner.key, body });

async function draftCampaign(settings: { dialLadder?: DialLadder; maxConcurrentCalls?: number } = {}) {
  return db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'List',
      acceptsLeadPush: true,
      dialLadder: SINGLE_ATTEMPT,
      callingWindow: ALWAYS_OPEN,
      ...settings,
    },
  });
}
const addContacts = (campaignId: string, contacts: unknown[]) =>
  request('POST', `/campaigns/${campaignId}/contacts`, { contacts });
const phone = (index: number, lastDigit = 0) => `+1415556${String(index).padStart(3, '0')}${lastDigit}`;

describe('POST /campaigns/{id}/contacts', () => {
  it("skips duplicates in the request and phones already listed, keeps an existing contact's name and metadata, and counts added and total", async () => {
    const campaign = await draftCampaign();
    await db.contact.create({
      data: { workspaceId: owner.workspaceId, phone: '+14155550100', name: 'Known', metadata: { tier: 'gold' } },
    });
    const first = await addContacts(campaign.id, [
      { phone: '+1 415 555 0100', name: 'Renamed', metadata: { tier: 'tin' } },
      { phone: '+14155550101', name: 'Ada', metadata: { city: 'Paris' } },
      { phone: '+14155550101', name: 'Ada again' },
      { phone: '+14155550102' },
    ]);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ added: 3, total: 3 });
    const known = await db.contact.findUniqueOrThrow({
      where: { workspaceId_phone: { workspaceId: owner.workspaceId, phone: '+14155550100' } },
    });
    expect(known).toMatchObject({ name: 'Known', metadata: { tier: 'gold' } });
    expect(
      (
        await db.contact.findUniqueOrThrow({
          where: { workspaceId_phone: { workspaceId: owner.workspaceId, phone: '+14155550101' } },
        })
      ).name,
    ).toBe('Ada');

    const second = await addContacts(campaign.id, [{ phone: '+14155550102' }, { phone: '+14155550103' }]);
    expect(await second.json()).toEqual({ added: 1, total: 2 });
    expect(await db.campaignContact.count({ where: { campaignId: campaign.id } })).toBe(4);
    // Another campaign's list takes the same phones: they are workspace contacts already.
    const other = await draftCampaign();
    expect(await (await addContacts(other.id, [{ phone: '+14155550100' }])).json()).toEqual({ added: 1, total: 1 });
    expect(await db.contact.count({ where: { workspaceId: owner.workspaceId, phone: '+14155550100' } })).toBe(1);
  });

  it('refuses an invalid phone, an empty or oversized list, and a campaign that is not DRAFT, storing nothing', async () => {
    const campaign = await draftCampaign();
    const invalid = await addContacts(campaign.id, [{ phone: '+14155550110' }, { phone: '12345' }]);
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({
      error: 'invalid_body',
      issues: [{ path: ['contacts', '1', 'phone'] }],
    });
    expect((await addContacts(campaign.id, [])).status).toBe(400);
    const tooMany = await addContacts(
      campaign.id,
      Array.from({ length: 10_001 }, (_, index) => ({ phone: `+1415${String(2_000_000 + index)}` })),
    );
    expect(tooMany.status).toBe(400);
    expect(await db.campaignContact.count({ where: { campaignId: campaign.id } })).toBe(0);

    await transitionCampaign(api, owner.key, campaign.id, 'start');
    const started = await addContacts(campaign.id, [{ phone: '+14155550111' }]);
    expect(started.status).toBe(409);
    expect(await started.json()).toEqual({ error: 'campaign_not_draft', status: 'RUNNING' });
    expect(await db.campaignContact.count({ where: { campaignId: campaign.id } })).toBe(0);
  });

  it('never lists a phone twice when two imports of the same phones run at once', async () => {
    const campaign = await draftCampaign();
    const contacts = Array.from({ length: 2_000 }, (_, index) => ({
      phone: `+1415${String(3_000_000 + index)}`,
      name: `n${index}`,
    }));
    const [a, b] = await Promise.all([
      addContacts(campaign.id, contacts),
      addContacts(campaign.id, [...contacts].reverse()),
    ]);
    const [bodyA, bodyB] = (await Promise.all([a.json(), b.json()])) as Array<{ added: number; total: number }>;
    expect(bodyA!.total).toBe(2_000);
    expect(bodyA!.added + bodyB!.added).toBe(2_000);
    expect(await db.campaignContact.count({ where: { campaignId: campaign.id } })).toBe(2_000);
    expect(
      await db.contact.count({
        where: { workspaceId: owner.workspaceId, phone: { in: contacts.map((contact) => contact.phone) } },
      }),
    ).toBe(2_000);
  });

  it('previews the calling list: columns from the metadata seen, row count, first rows', async () => {
    const campaign = await draftCampaign();
    await addContacts(campaign.id, [
      { phone: '+14155550120', name: 'A', metadata: { city: 'Oslo' } },
      { phone: '+14155550121', name: 'B', metadata: { plan: 'pro', city: 'Rome' } },
      ...Array.from({ length: 6 }, (_, index) => ({ phone: `+141555501${30 + index}` })),
    ]);
    const preview = (await (await request('GET', `/campaigns/${campaign.id}/contacts`)).json()) as Record<string, any>;
    expect(preview.columns).toEqual(['phone', 'name', 'city', 'plan']);
    expect(preview.rowCount).toBe(8);
    expect(preview.preview).toHaveLength(5);
    expect(preview.preview[1]).toEqual({ phone: '+14155550121', name: 'B', plan: 'pro', city: 'Rome' });
  });
});

describe('starting a campaign with a calling list', () => {
  it('answers at once, then enrolls every contact as a lead paced by the cap, dialing each once', async () => {
    const campaign = await draftCampaign({ maxConcurrentCalls: 2 });
    await addContacts(
      campaign.id,
      Array.from({ length: 30 }, (_, index) => ({ phone: phone(index), metadata: { row: index } })),
    );
    await transitionCampaign(api, owner.key, campaign.id, 'start');

    // Never more than 2 × the cap enrolled ahead of the dialing.
    let mostAhead = 0;
    await until(
      async () => {
        const [enrolled, dialed] = await Promise.all([
          db.lead.count({ where: { campaignId: campaign.id } }),
          db.lead.count({ where: { campaignId: campaign.id, calls: { some: {} } } }),
        ]);
        mostAhead = Math.max(mostAhead, enrolled - dialed);
        return db.lead.count({ where: { campaignId: campaign.id, status: 'completed' } });
      },
      (done) => done === 30,
      60_000,
    );
    expect(mostAhead).toBeLessThanOrEqual(4);
    expect(await db.campaignContact.count({ where: { campaignId: campaign.id, enrolledAt: null } })).toBe(0);
    expect(await db.call.count({ where: { campaignId: campaign.id } })).toBe(30);
    const lead = await db.lead.findFirstOrThrow({ where: { campaignId: campaign.id, phone: phone(7) } });
    expect(lead.fields).toEqual({ row: 7 });
  }, 90_000);

  it("gives an enrolled contact's lead the workflow id a push of its key gets: one lead, one workflow, one call", async () => {
    const enrolling = await draftCampaign();
    await addContacts(enrolling.id, [{ phone: '+14155550150' }]);
    const { contactId } = await db.campaignContact.findFirstOrThrow({ where: { campaignId: enrolling.id } });
    const key = contactLeadKey(contactId);
    await transitionCampaign(api, owner.key, enrolling.id, 'start');
    const enrolled = await until(
      () => db.lead.findFirst({ where: { campaignId: enrolling.id } }),
      (lead) => lead?.workflowStartedAt != null,
    );
    // Stored by the enrollment's SQL, started in Temporal: the id lib/temporal/workflow-ids.ts makes for (campaign, key).
    expect(enrolled).toMatchObject({ idempotencyKey: key, workflowId: leadWorkflowId(enrolling.id, key) });
    expect(await leadResult(temporal.client, enrolling.id, key)).toMatchObject({ status: 'completed', attempts: 1 });

    // The same key pushed to the campaign: the same lead, no second workflow, no second call.
    const pushLead = (campaignId: string) =>
      api.request('POST', `/v1/campaigns/${campaignId}/leads`, {
        key: owner.key,
        body: { lead: { phone: '+14155550150' }, idempotencyKey: key },
      });
    const again = await pushLead(enrolling.id);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ leadId: enrolled!.id, deduplicated: true });
    const workflowIds: string[] = [];
    for await (const run of temporal.client.workflow.list({
      query: `CampaignId = "${enrolling.id}" AND WorkflowType = "${LEAD_LADDER_WORKFLOW}"`,
    }))
      workflowIds.push(run.workflowId);
    expect(workflowIds).toEqual([leadWorkflowId(enrolling.id, key)]);
    expect(await db.call.count({ where: { leadId: enrolled!.id } })).toBe(1);

    // The push path stores and starts the same function of (campaign, key).
    const pushed = await draftCampaign();
    await db.campaign.update({ where: { id: pushed.id }, data: { status: 'RUNNING' } });
    expect((await pushLead(pushed.id)).status).toBe(202);
    expect(await db.lead.findFirstOrThrow({ where: { campaignId: pushed.id } })).toMatchObject({
      idempotencyKey: key,
      workflowId: leadWorkflowId(pushed.id, key),
    });
    expect(await leadResult(temporal.client, pushed.id, key)).toMatchObject({ status: 'completed', attempts: 1 });
  });

  it('deleting the campaign clears its calling list', async () => {
    const campaign = await draftCampaign();
    await addContacts(campaign.id, [{ phone: '+14155550140' }]);
    expect((await request('DELETE', `/campaigns/${campaign.id}`)).status).toBe(204);
    expect(await db.campaignContact.count({ where: { campaignId: campaign.id } })).toBe(0);
  });
});

describe('campaign read models', () => {
  it('computes every KPI of a campaign whose calls are scripted through the simulated provider', async () => {
    const twoRungs: DialLadder = { ...SINGLE_ATTEMPT, rungs: [{ delaySeconds: 0 }, { delaySeconds: 0 }] };
    const campaign = await draftCampaign({ dialLadder: twoRungs });
    // The last digit scripts the outcome: 0 and 2 answered, 5 busy, 7 voicemail, 9 invalid number.
    await addContacts(campaign.id, [
      { phone: '+14155550110' },
      { phone: '+14155550132' },
      { phone: '+14155550145' },
      { phone: '+14155550157' },
      { phone: '+14155550169' },
    ]);
    await transitionCampaign(api, owner.key, campaign.id, 'start');
    // A pushed lead: answered, "triggered" through the API.
    const pushed = await request('POST', `/v1/campaigns/${campaign.id}/leads`, {
      lead: { phone: '+14155550170' },
      idempotencyKey: 'api-lead',
    });
    expect(pushed.status).toBe(202);
    await until(
      () => db.lead.count({ where: { campaignId: campaign.id, status: { in: ['completed', 'failed', 'cancelled'] } } }),
      (n) => n === 6,
      60_000,
    );

    const kpis = (await (await request('GET', `/campaigns/${campaign.id}/kpis`)).json()) as Record<string, number>;
    // answered: 0110 (31 s), 0132 (33 s), 0170 (37 s); busy 0145 ×2; voicemail 0157 ×2; invalid 0169 ×1.
    expect(kpis).toEqual({
      contacts: 6,
      dialedContacts: 6,
      reachedContacts: 4,
      pickedUpContacts: 3,
      placed: 8,
      connectRate: 0.6667,
      pickupRate: 0.5,
      avgDurationMs: Math.round((31_000 + 33_000 + 37_000) / 3),
      pending: 0,
      completed: 3,
      failed: 3,
      reengaging: 0,
      triggered: 1,
      // Every call of this file goes through the simulated carrier (docs/configuration.md#simulators).
      simulatedPlaced: 8,
      pausedReason: null,
    });
  }, 90_000);

  it('counts waiting contacts as pending and re-engaged leads, before a campaign drains', async () => {
    const campaign = await draftCampaign();
    await addContacts(campaign.id, [{ phone: '+14155550180' }, { phone: '+14155550181' }]);
    const kpis = (await (await request('GET', `/campaigns/${campaign.id}/kpis`)).json()) as Record<string, number>;
    expect(kpis).toMatchObject({
      contacts: 2,
      pending: 2,
      dialedContacts: 0,
      connectRate: 0,
      pickupRate: 0,
      avgDurationMs: 0,
      placed: 0,
    });
  });

  it('lists the latest 50 calls as activity, and the leads by offset with total', async () => {
    const campaign = await draftCampaign();
    const leads = await Promise.all(
      Array.from({ length: 55 }, (_, index) =>
        db.lead.create({
          data: {
            workspaceId: owner.workspaceId,
            campaignId: campaign.id,
            idempotencyKey: `k${index}`,
            phone: phone(index),
            workflowId: `w-${randomUUID()}`,
            requestId: randomUUID(),
            createdAt: new Date(Date.now() - (55 - index) * 1000),
          },
        }),
      ),
    );
    await db.call.createMany({
      data: leads.map((lead, index) => ({
        workspaceId: owner.workspaceId,
        campaignId: campaign.id,
        leadId: lead.id,
        attempt: 1,
        attemptId: `${lead.id}:1`,
        provider: 'simulated',
        status: 'ended',
        outcome: 'answered',
        durationMs: 30_000,
        startedAt: new Date(Date.now() - (55 - index) * 1000),
      })),
    });
    const activity = (await (await request('GET', `/campaigns/${campaign.id}/activity`)).json()) as Array<{
      leadId: string;
      phone: string;
    }>;
    expect(activity).toHaveLength(50);
    expect(activity[0]!.leadId).toBe(leads[54]!.id);
    expect(activity.at(-1)!.leadId).toBe(leads[5]!.id);

    const page = (await (await request('GET', `/campaigns/${campaign.id}/leads?limit=20&offset=40`)).json()) as {
      items: Array<{ leadId: string }>;
      total: number;
    };
    expect(page.total).toBe(55);
    expect(page.items.map((item) => item.leadId)).toEqual(
      leads
        .slice(0, 15)
        .reverse()
        .map((lead) => lead.id),
    );
    expect((await request('GET', `/campaigns/${campaign.id}/leads?limit=201`)).status).toBe(400);
    expect(
      ((await (await request('GET', `/campaigns/${campaign.id}/leads`)).json()) as { items: unknown[] }).items,
    ).toHaveLength(50);
  });

  it('logs every request against the campaign (never the key), pages them by cursor with a total, and trims them by age', async () => {
    const campaign = await draftCampaign();
    const viewer = await createTestWorkspace(db, { scopes: ['campaigns.view'] });
    await request('GET', `/campaigns/${campaign.id}/kpis`);
    await request('POST', `/v1/campaigns/${campaign.id}/leads`, {
      lead: { phone: '+14155550190' },
      idempotencyKey: 'logged',
    });
    await request('PATCH', `/campaigns/${campaign.id}?ignored=1`, { name: 'Renamed' });
    // Another workspace's key: refused, and not logged against this campaign.
    await api.request('GET', `/campaigns/${campaign.id}/kpis`, { key: viewer.key });
    const logs = await until(
      () => db.apiLog.findMany({ where: { campaignId: campaign.id }, orderBy: { createdAt: 'asc' } }),
      (rows) => rows.length === 3,
    );
    expect(logs.map((log) => [log.method, log.path, log.status, log.keyId])).toEqual([
      ['GET', `/campaigns/${campaign.id}/kpis`, 200, owner.keyId],
      ['POST', `/v1/campaigns/${campaign.id}/leads`, 202, owner.keyId],
      ['PATCH', `/campaigns/${campaign.id}`, 200, owner.keyId],
    ]);
    expect(JSON.stringify(logs)).not.toContain(owner.key);

    const first = (await (await request('GET', `/campaigns/${campaign.id}/api-logs?limit=2`)).json()) as Record<
      string,
      any
    >;
    expect(first.total).toBe(3);
    expect(first.items.map((item: { method: string }) => item.method)).toEqual(['PATCH', 'POST']);
    expect(first.items[0].requestId).toMatch(/^[0-9a-f-]{36}$/);
    const second = (await (
      await request('GET', `/campaigns/${campaign.id}/api-logs?limit=2&cursor=${first.nextCursor}`)
    ).json()) as Record<string, any>;
    expect(second.items.map((item: { method: string }) => item.method)).toEqual(['GET']);
    expect(second.nextCursor).toBeNull();
    expect((await request('GET', `/campaigns/${campaign.id}/api-logs?limit=101`)).status).toBe(400);

    await db.apiLog.updateMany({
      where: { campaignId: campaign.id, method: 'GET' },
      data: { createdAt: new Date(Date.now() - 31 * 86_400_000) },
    });
    const sql = createSqlPool(url, 1);
    expect(await trimApiLogs({ sql }, 30)).toBeGreaterThanOrEqual(1);
    await sql.end();
    expect(await db.apiLog.count({ where: { campaignId: campaign.id } })).toBe(2);
  });
});
