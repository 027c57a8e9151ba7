import { describe, expect, it } from 'vitest';
import { DEFAULT_CALLING_WINDOW } from '../../lib/dial-ladder/calling-window';
import { DEFAULT_DIAL_LADDER } from '../../lib/dial-ladder/dial-ladder';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, QUICK_LADDER } from '../support/ladders';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { journey } from '../support/journeys';
import { saveJourney } from '../../api/journeys/journeys';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { transitionCampaign } from '../support/campaign-transition';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(await startTestCarrier(db), api) });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view', 'campaigns.delete'] });
const request = (method: string, path: string, body?: unknown) => api.request(method, path, { key: owner.key, body });
// Campaigns call only from numbers of their workspace (test/phone-numbers/phone-numbers.test.ts has the rules).
await assignPhoneNumber(db, owner.workspaceId, '+14155550100');

describe('campaigns', () => {
  it('creates a campaign with documented defaults, and with its own settings', async () => {
    const plain = await request('POST', '/campaigns', { name: 'Plain' });
    expect(plain.status).toBe(201);
    expect(await plain.json()).toMatchObject({
      name: 'Plain',
      kind: 'CLASSIC',
      channel: 'VOICE',
      status: 'DRAFT',
      acceptsLeadPush: false,
      dialLadder: DEFAULT_DIAL_LADDER,
      callingWindow: DEFAULT_CALLING_WINDOW,
      agentId: null,
      callerNumbers: [],
      maxConcurrentCalls: 10,
    });
    const agent = await db.agent.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Agent',
        language: 'en-US',
        voiceId: 'espeak-ng/en-us',
        script: { openingLine: 'Hello', questions: [], closing: '' },
      },
    });
    const custom = await request('POST', '/campaigns', {
      name: 'Custom',
      acceptsLeadPush: true,
      dialLadder: QUICK_LADDER,
      callingWindow: ALWAYS_OPEN,
      agentId: agent.id,
      callerNumbers: ['+1 415 555 0100'],
      maxConcurrentCalls: 3,
    });
    expect(await custom.json()).toMatchObject({
      dialLadder: QUICK_LADDER,
      callingWindow: ALWAYS_OPEN,
      agentId: agent.id,
      callerNumbers: ['+14155550100'],
      maxConcurrentCalls: 3,
    });
  });

  it('refuses invalid settings with invalid_body and creates nothing', async () => {
    const before = await db.campaign.count();
    for (const body of [
      { name: 'x', callingWindow: { start: '20:00', end: '09:00', days: [1] } },
      { name: 'x', dialLadder: { rungs: [], outcomes: {} } },
      { name: 'x', callerNumbers: ['555'] },
      { name: 'x', maxConcurrentCalls: 0 },
      { name: 'x', status: 'RUNNING' },
    ]) {
      const response = await request('POST', '/campaigns', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_body');
    }
    expect(await db.campaign.count()).toBe(before);
  });

  it('updates settings until the campaign is stopped; null restores a default', async () => {
    const { id } = (await (
      await request('POST', '/campaigns', { name: 'Editable', dialLadder: QUICK_LADDER })
    ).json()) as { id: string };
    const updated = await request('PATCH', `/campaigns/${id}`, {
      name: 'Edited',
      dialLadder: null,
      maxConcurrentCalls: 2,
    });
    expect(await updated.json()).toMatchObject({
      name: 'Edited',
      dialLadder: DEFAULT_DIAL_LADDER,
      maxConcurrentCalls: 2,
    });
    expect((await request('PATCH', `/campaigns/${id}`, {})).status).toBe(400);
    await transitionCampaign(api, owner.key, id, 'stop');
    const refused = await request('PATCH', `/campaigns/${id}`, { name: 'Too late' });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toEqual({ error: 'campaign_stopped' });
  });

  it('lists and reads only live campaigns of the workspace; delete stops the campaign first', async () => {
    const { id } = (await (await request('POST', '/campaigns', { name: 'Doomed' })).json()) as { id: string };
    await transitionCampaign(api, owner.key, id, 'start');
    expect((await request('DELETE', `/campaigns/${id}`)).status).toBe(204);
    expect((await db.campaign.findUniqueOrThrow({ where: { id } })).status).toBe('STOPPED');
    expect((await request('GET', `/campaigns/${id}`)).status).toBe(403);
    const listed = (await (await request('GET', '/campaigns')).json()) as Array<{ id: string }>;
    expect(listed.map((campaign) => campaign.id)).not.toContain(id);
    expect((await request('DELETE', `/campaigns/${id}`)).status).toBe(403);
  });

  it('creates a JOURNEY campaign on a journey (workflowId) of its own workspace, and refuses one without it', async () => {
    const graph = journey(
      [
        { id: 'start', type: 'start' },
        { id: 'done', type: 'end' },
      ],
      [['start', 'done']],
    );
    const own = await saveJourney(db, owner.workspaceId, { name: 'Own', definition: graph });
    const stranger = await createTestWorkspace(db);
    const foreign = await saveJourney(db, stranger.workspaceId, { name: 'Foreign', definition: graph });

    const created = await request('POST', '/campaigns', {
      name: 'Journey',
      kind: 'JOURNEY',
      workflowId: own.id,
      maxLiveRuns: 25,
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    // Read back as stored: the API's workflowId is the campaign's journeyId (column "workflowId").
    expect(await (await request('GET', `/campaigns/${id}`)).json()).toMatchObject({
      kind: 'JOURNEY',
      workflowId: own.id,
      maxLiveRuns: 25,
    });
    expect((await db.campaign.findUniqueOrThrow({ where: { id } })).journeyId).toBe(own.id);
    for (const [body, message] of [
      [{ name: 'J', kind: 'JOURNEY' }, 'a JOURNEY campaign names the workflow its leads are enrolled into'],
      [{ name: 'J', kind: 'JOURNEY', workflowId: foreign.id }, 'no workflow of this workspace has this id'],
      [{ name: 'C', workflowId: own.id }, 'only a JOURNEY campaign runs a workflow'],
    ] as const) {
      const refused = await request('POST', '/campaigns', body);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({
        error: 'invalid_body',
        issues: [{ path: ['workflowId'], message }],
      });
    }
    expect(await db.campaign.count({ where: { workspaceId: owner.workspaceId, name: { in: ['J', 'C'] } } })).toBe(0);
  });
});
