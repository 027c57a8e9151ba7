import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { saveJourney, publishJourney } from '../../api/journeys/journeys';
import type { JourneyDefinition } from '../../lib/journeys';
import { leadWorkflowId } from '../../lib/temporal/workflow-ids';
import { journeyRunStateQuery, recoverSignal, recoverUpdate } from '../../lib/temporal/messages';
import { insertAgent } from '../support/agents';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startReceiver } from '../support/http-receiver';
import { journey, publishedJourney, runningJourneyCampaign } from '../support/journeys';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(await startTestCarrier(db), api) });
const operator = await createTestWorkspace(db, {
  scopes: ['campaigns.edit', 'workflows.view', 'workflows.run', 'workflows.recover', 'agents.delete'],
  settings: { features: ['workflows'] },
});

type Run = Record<string, any>;
const request = (method: string, path: string, body?: unknown) =>
  api.request(method, path, { key: operator.key, body });

const journeyCampaign = (definition: JourneyDefinition, settings: { maxLiveRuns?: number } = {}) =>
  runningJourneyCampaign(db, operator.workspaceId, definition, settings);

async function pushLead(campaignId: string, phone: string, fields: Record<string, unknown> = {}) {
  const idempotencyKey = randomUUID();
  const response = await request('POST', `/v1/campaigns/${campaignId}/leads`, {
    lead: { phone, fields },
    idempotencyKey,
  });
  return { response, idempotencyKey, body: (await response.json()) as Record<string, any> };
}

const readRun = async (journeyId: string, runId: string) =>
  (await (await request('GET', `/workflows/${journeyId}/runs/${runId}`)).json()) as Run;
/** The run once it is in one of the statuses (an ended one: once its row says so too). */
const runIn = (journeyId: string, runId: string, ...statuses: string[]) =>
  until(
    () => readRun(journeyId, runId),
    (run) =>
      statuses.includes(run.status) && (['running', 'needs_recovery'].includes(run.status) || run.endedAt !== null),
  );

describe('POST /workflows/variable-catalog', () => {
  const branching = journey(
    [
      { id: 'start', type: 'start', data: { fields: [{ name: 'plan', type: 'string' }] } },
      {
        id: 'route',
        type: 'branch',
        data: {
          rules: [{ handle: 'vip', when: { variable: 'start.fields.plan', operator: 'equals', value: 'gold' } }],
          defaultHandle: 'other',
        },
      },
      { id: 'hook', type: 'webhook', data: { url: 'https://example.test/vip' } },
      { id: 'nap', type: 'wait', data: { seconds: 60 } },
      { id: 'after', type: 'set_variable', data: { value: '{{hook.status?}} {{start.fields.plan}}' } },
      { id: 'done', type: 'end' },
    ],
    [
      ['start', 'route'],
      ['route', 'hook', 'vip'],
      ['route', 'nap', 'other'],
      ['hook', 'after'],
      ['nap', 'after'],
      ['after', 'done'],
    ],
  );

  it('describes trigger input, producers, per-node availability across branches, and operators by type', async () => {
    const response = await request('POST', '/workflows/variable-catalog', { definition: branching });
    expect(response.status).toBe(200);
    const catalog = (await response.json()) as Record<string, any>;
    expect(catalog.triggerInput).toMatchObject({
      name: 'fields',
      type: 'object',
      open: true,
      children: [expect.objectContaining({ name: 'plan', type: 'string' })],
    });
    expect(catalog.producers.map((producer: { nodeId: string }) => producer.nodeId)).toEqual([
      'start',
      'route',
      'hook',
      'nap',
      'after',
    ]);
    const at = (node: string) =>
      Object.fromEntries(
        (catalog.availabilityByNode[node] as Array<{ path: string; optional: boolean }>).map((entry) => [
          entry.path,
          entry.optional,
        ]),
      );
    // Produced on one branch only: optional after the join; start's fields everywhere after start.
    expect(at('after')).toMatchObject({
      'hook.status': true,
      'nap.wokeAt': true,
      'route.matched': false,
      'start.fields.plan': false,
    });
    expect(at('hook')['hook.status']).toBeUndefined();
    expect(catalog.conditionOperatorsByType.number).toContain('gt');
  });

  it('answers 422 workflow_invalid with messages naming the nodes, and 400 invalid_body for a body of the wrong shape', async () => {
    const broken = {
      ...branching,
      nodes: branching.nodes.map((node) =>
        node.id === 'after' ? { ...node, data: { value: '{{hook.status}}' } } : node,
      ),
    };
    const invalid = await request('POST', '/workflows/variable-catalog', { definition: broken });
    expect(invalid.status).toBe(422);
    expect(await invalid.json()).toEqual({
      error: 'workflow_invalid',
      details: [
        'node "after": {{hook.status}} is not set on every path to this node; write {{hook.status?}} to read it where set',
      ],
    });
    const shapeless = await request('POST', '/workflows/variable-catalog', { definition: { nodes: 'none' } });
    expect(shapeless.status).toBe(400);
    expect(await shapeless.json()).toMatchObject({
      error: 'invalid_body',
      issues: expect.arrayContaining([expect.objectContaining({ path: ['definition', 'nodes'] })]),
    });
  });
});

describe('a journey run walks the graph', () => {
  it("runs call, branch, webhook and wait nodes to the end, with the lead's fields and the call's outcome in its variables", async () => {
    const receiver = await startReceiver(() => ({ status: 200, json: { accepted: true, ticket: 'T-1' } }));
    const definition = journey(
      [
        { id: 'start', type: 'start', data: { fields: [{ name: 'plan', type: 'string' }] } },
        { id: 'call1', type: 'call' },
        {
          id: 'route',
          type: 'branch',
          data: {
            rules: [{ handle: 'reached', when: { variable: 'call1.outcome', operator: 'equals', value: 'answered' } }],
            defaultHandle: 'missed',
          },
        },
        {
          id: 'notify',
          type: 'webhook',
          data: { url: receiver.url, body: '{"plan":"{{start.fields.plan}}","outcome":"{{call1.outcome}}"}' },
        },
        { id: 'pause', type: 'wait', data: { seconds: 1 } },
        { id: 'tag', type: 'set_variable', data: { value: '{{notify.body.ticket}}' } },
        { id: 'done', type: 'end' },
        { id: 'gaveUp', type: 'end', data: { outcome: 'missed' } },
      ],
      [
        ['start', 'call1'],
        ['call1', 'route'],
        ['route', 'notify', 'reached'],
        ['route', 'gaveUp', 'missed'],
        ['notify', 'pause'],
        ['pause', 'tag'],
        ['tag', 'done'],
      ],
    );
    const { published, campaign } = await journeyCampaign(definition);

    const pushed = await pushLead(campaign.id, '+14155550120', { plan: 'pro', shoeSize: 44 });
    expect(pushed.response.status).toBe(202);
    expect(pushed.body.warnings).toEqual({ undeclaredVariables: ['shoeSize'] });

    const run = await runIn(published.id, pushed.body.leadId, 'completed');
    expect(run).toMatchObject({
      leadId: pushed.body.leadId,
      campaignId: campaign.id,
      revision: 1,
      currentNodeId: 'done',
      startedBy: 'lead_push',
    });
    expect(run.variables).toMatchObject({
      start: { phone: '+14155550120', fields: { plan: 'pro', shoeSize: 44 } },
      call1: { outcome: 'answered', attempts: 1, durationMs: 32_000 },
      route: { matched: 'reached' },
      notify: { status: 200, body: { accepted: true, ticket: 'T-1' } },
      tag: { value: 'T-1' },
    });
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]!.body)).toEqual({ plan: 'pro', outcome: 'answered' });
    expect(receiver.received[0]!.headers['content-type']).toBe('application/json');
    expect(await db.call.count({ where: { leadId: pushed.body.leadId } })).toBe(1);
    expect((await db.lead.findUniqueOrThrow({ where: { id: pushed.body.leadId } })).status).toBe('completed');
    // The call node's child is the current ladder (patch call-node-ladder-v2); a lead run's id is its lead's.
    const child = await temporal.client.workflow.getHandle(`journey-${pushed.body.leadId}-call-call1-1`).describe();
    expect(child.type).toBe('leadLadderWorkflowV2');

    // A number that is not answered takes the other branch.
    const missed = await pushLead(campaign.id, '+14155550125', { plan: 'basic' });
    expect((await runIn(published.id, missed.body.leadId, 'completed')).currentNodeId).toBe('gaveUp');
    expect(receiver.received).toHaveLength(1);
  });

  it('renders lead data into a JSON body as values: a field trying to add keys stays one string', async () => {
    const receiver = await startReceiver(() => ({ status: 200, json: { ok: true } }));
    const definition = journey(
      [
        { id: 'start', type: 'start', data: { fields: [{ name: 'company', type: 'string' }] } },
        {
          id: 'notify',
          type: 'webhook',
          data: {
            url: `${receiver.url}/{{start.fields.company}}`,
            body: '{"company":"{{start.fields.company}}","n":{{start.fields.n?}} }',
          },
        },
        { id: 'done', type: 'end' },
      ],
      [
        ['start', 'notify'],
        ['notify', 'done'],
      ],
    );
    const { published, campaign } = await journeyCampaign(definition);
    const company = 'Acme", "admin": true, "x": "';
    const pushed = await pushLead(campaign.id, '+14155550126', { company, n: 7 });
    await runIn(published.id, pushed.body.leadId, 'completed');
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]!.body)).toEqual({ company, n: 7 });
    expect(receiver.received[0]!.headers['content-type']).toBe('application/json');
  });

  it("places a call node's calls with the agent it names; publishing needs it to be a live agent of the workspace, and it cannot be deleted while the campaign runs", async () => {
    const [campaignAgent, nodeAgent] = [
      await insertAgent(db, operator.workspaceId, { name: 'Campaign agent' }),
      await insertAgent(db, operator.workspaceId, { name: 'Node agent' }),
    ];
    const elsewhere = await createTestWorkspace(db, { scopes: [] });
    const foreign = await insertAgent(db, elsewhere.workspaceId);
    const withAgent = (agentId: string) =>
      journey(
        [
          { id: 'start', type: 'start' },
          { id: 'call1', type: 'call', data: { agentId } },
          { id: 'done', type: 'end' },
        ],
        [
          ['start', 'call1'],
          ['call1', 'done'],
        ],
      );
    for (const agentId of [foreign.id, randomUUID(), 'not-an-id']) {
      const saved = await saveJourney(db, operator.workspaceId, { definition: withAgent(agentId) });
      await expect(publishJourney(db, operator.workspaceId, saved.id)).rejects.toMatchObject({
        code: 'workflow_invalid',
        extras: { details: [`node "call1": agentId "${agentId}" is not an agent of this workspace`] },
      });
      expect((await db.journey.findUniqueOrThrow({ where: { id: saved.id } })).status).toBe('DRAFT');
    }

    const { published, campaign } = await journeyCampaign(withAgent(nodeAgent.id));
    await db.campaign.update({ where: { id: campaign.id }, data: { agentId: campaignAgent.id } });
    const pushed = await pushLead(campaign.id, '+14155550120');
    await runIn(published.id, pushed.body.leadId, 'completed');
    expect(await db.call.findFirstOrThrow({ where: { leadId: pushed.body.leadId } })).toMatchObject({
      agentId: nodeAgent.id,
    });
    const refused = await request('DELETE', `/agents/${nodeAgent.id}`);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: 'agent_in_use', campaignIds: [campaign.id] });
    expect((await db.agent.findUniqueOrThrow({ where: { id: nodeAgent.id } })).deletedAt).toBeNull();
  });

  it('refuses a lead without a field the start node requires, in its own result', async () => {
    const { campaign } = await journeyCampaign(
      journey(
        [
          { id: 'start', type: 'start', data: { fields: [{ name: 'orderId', type: 'string', required: true }] } },
          { id: 'done', type: 'end' },
        ],
        [['start', 'done']],
      ),
    );
    const batch = (await (
      await request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
        leads: [
          { lead: { phone: '+14155550130', fields: { orderId: 'A1' } }, idempotencyKey: 'with' },
          { lead: { phone: '+14155550131' }, idempotencyKey: 'without' },
        ],
      })
    ).json()) as Record<string, any>;
    expect(batch.summary).toEqual({ queued: 1, duplicate: 0, rejected: 1 });
    expect(batch.results[1]).toMatchObject({
      status: 'rejected',
      error: 'invalid_body',
      retryable: false,
      issues: [{ path: ['lead', 'fields', 'orderId'] }],
    });
    const single = await request('POST', `/v1/campaigns/${campaign.id}/leads`, {
      lead: { phone: '+14155550131' },
      idempotencyKey: 'without',
    });
    expect(single.status).toBe(422);
    expect(await db.lead.count({ where: { campaignId: campaign.id } })).toBe(1);
  });

  it('lists runs with offset pagination, the total in X-Total-Count, filtered by status', async () => {
    const definition = journey(
      [
        { id: 'start', type: 'start' },
        { id: 'look', type: 'review', data: { instructions: 'Check the lead' } },
        { id: 'done', type: 'end' },
      ],
      [
        ['start', 'look'],
        ['look', 'done'],
      ],
    );
    const { published, campaign } = await journeyCampaign(definition);
    const leads = [];
    for (let index = 0; index < 3; index++) leads.push(await pushLead(campaign.id, `+1415555014${index}`));
    for (const lead of leads) await runIn(published.id, lead.body.leadId, 'needs_recovery');
    await request('POST', `/workflows/${published.id}/runs/${leads[0]!.body.leadId}/recover`, {
      action: 'skip',
      output: { decision: 'approved' },
    });
    await runIn(published.id, leads[0]!.body.leadId, 'completed');

    const page = await request('GET', `/workflows/${published.id}/runs?status=needs_recovery&limit=1&offset=1`);
    expect(page.headers.get('x-total-count')).toBe('2');
    const items = (await page.json()) as Run[];
    expect(items).toHaveLength(1);
    expect(items[0]!.status).toBe('needs_recovery');
    const all = await request('GET', `/workflows/${published.id}/runs`);
    expect(all.headers.get('x-total-count')).toBe('3');
    expect((await request('GET', `/workflows/${published.id}/runs?status=paused`)).status).toBe(400);
  });

  it('keeps runs in flight on the revision they were enrolled into when the journey is edited and republished', async () => {
    const first = journey(
      [
        { id: 'start', type: 'start' },
        { id: 'look', type: 'review', data: { instructions: 'v1' } },
        { id: 'v1End', type: 'end' },
      ],
      [
        ['start', 'look'],
        ['look', 'v1End'],
      ],
    );
    const { published, campaign } = await journeyCampaign(first);
    const early = await pushLead(campaign.id, '+14155550150');
    await runIn(published.id, early.body.leadId, 'needs_recovery');

    const second = journey(
      [
        { id: 'start', type: 'start' },
        { id: 'look', type: 'review', data: { instructions: 'v2' } },
        { id: 'v2End', type: 'end' },
      ],
      [
        ['start', 'look'],
        ['look', 'v2End'],
      ],
    );
    await saveJourney(db, operator.workspaceId, { id: published.id, definition: second });
    const republished = await publishJourney(db, operator.workspaceId, published.id);
    expect(republished).toMatchObject({ revision: 2, publishedRevision: 2 });
    const late = await pushLead(campaign.id, '+14155550151');
    await runIn(published.id, late.body.leadId, 'needs_recovery');

    for (const lead of [early, late])
      await request('POST', `/workflows/${published.id}/runs/${lead.body.leadId}/recover`, { action: 'skip' });
    expect(await runIn(published.id, early.body.leadId, 'completed')).toMatchObject({
      revision: 1,
      currentNodeId: 'v1End',
    });
    expect(await runIn(published.id, late.body.leadId, 'completed')).toMatchObject({
      revision: 2,
      currentNodeId: 'v2End',
    });
  });
});

describe('the live cap of a JOURNEY campaign', () => {
  it('rejects leads over the cap as retryable, and accepts them with the same key once a run has ended', async () => {
    const definition = journey(
      [
        { id: 'start', type: 'start' },
        { id: 'look', type: 'review', data: { instructions: 'hold' } },
        { id: 'done', type: 'end' },
      ],
      [
        ['start', 'look'],
        ['look', 'done'],
      ],
    );
    const { published, campaign } = await journeyCampaign(definition, { maxLiveRuns: 1 });
    const first = await pushLead(campaign.id, '+14155550160');
    expect(first.response.status).toBe(202);

    const over = await request('POST', `/v1/campaigns/${campaign.id}/leads`, {
      lead: { phone: '+14155550161' },
      idempotencyKey: 'over-cap',
    });
    expect(over.status).toBe(429);
    expect(await over.json()).toEqual({ error: 'journey_live_cap_reached', retryable: true });
    const batch = (await (
      await request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
        leads: [
          { lead: { phone: '+14155550161' }, idempotencyKey: 'over-cap' },
          { lead: { phone: '+14155550162' }, idempotencyKey: first.idempotencyKey },
        ],
      })
    ).json()) as Record<string, any>;
    expect(batch.summary).toEqual({ queued: 0, duplicate: 1, rejected: 1 });
    expect(batch.results[0]).toMatchObject({
      status: 'rejected',
      retryable: true,
      error: 'journey_live_cap_reached',
      reason: 'live_cap',
      leadId: null,
    });
    expect(await db.lead.count({ where: { campaignId: campaign.id } })).toBe(1);

    await runIn(published.id, first.body.leadId, 'needs_recovery');
    await request('POST', `/workflows/${published.id}/runs/${first.body.leadId}/recover`, { action: 'end' });
    await runIn(published.id, first.body.leadId, 'cancelled');
    const later = await request('POST', `/v1/campaigns/${campaign.id}/leads`, {
      lead: { phone: '+14155550161' },
      idempotencyKey: 'over-cap',
    });
    expect(later.status).toBe(202);
  });

  it('holds the cap exactly under 20 concurrent pushes', async () => {
    const definition = journey(
      [
        { id: 'start', type: 'start' },
        { id: 'look', type: 'review', data: { instructions: 'hold' } },
        { id: 'done', type: 'end' },
      ],
      [
        ['start', 'look'],
        ['look', 'done'],
      ],
    );
    const { campaign } = await journeyCampaign(definition, { maxLiveRuns: 5 });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        request('POST', `/v1/campaigns/${campaign.id}/leads`, {
          lead: { phone: `+141555502${String(index).padStart(2, '0')}` },
          idempotencyKey: `burst-${index}`,
        }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(15);
    expect(await db.journeyRun.count({ where: { campaignId: campaign.id } })).toBe(5);
  });
});

describe('manual recovery', () => {
  const failingHook = (receiverUrl: string) =>
    journey(
      [
        { id: 'start', type: 'start' },
        { id: 'hook', type: 'webhook', data: { url: receiverUrl } },
        { id: 'after', type: 'set_variable', data: { value: 'hook said {{hook.status}}' } },
        { id: 'done', type: 'end' },
      ],
      [
        ['start', 'hook'],
        ['hook', 'after'],
        ['after', 'done'],
      ],
    );

  it('a node refused for good leaves the run needs_recovery (in the API and as a Temporal search attribute); retry by API resumes it', async () => {
    let refuse = true;
    const receiver = await startReceiver(() => (refuse ? 400 : { status: 201, json: { ok: true } }));
    const { published, campaign } = await journeyCampaign(failingHook(receiver.url));
    const { body } = await pushLead(campaign.id, '+14155550170');
    const stuck = await runIn(published.id, body.leadId, 'needs_recovery');
    expect(stuck.awaiting).toMatchObject({
      nodeId: 'hook',
      kind: 'recovery',
      errorType: 'journey_webhook_rejected',
      allowedActions: ['retry', 'skip', 'end'],
    });
    expect(receiver.received).toHaveLength(1);

    const temporalId = leadWorkflowId(
      campaign.id,
      (await db.lead.findUniqueOrThrow({ where: { id: body.leadId } })).idempotencyKey,
    );
    const found = await until(
      async () => {
        const ids: string[] = [];
        for await (const execution of temporal.client.workflow.list({
          query: `JourneyStatus = "needs_recovery" AND JourneyWorkflowId = "${published.id}" AND JourneyNodeId = "hook"`,
        }))
          ids.push(execution.workflowId);
        return ids;
      },
      (ids) => ids.includes(temporalId),
    );
    expect(found).toEqual([temporalId]);

    refuse = false;
    const recovered = await request('POST', `/workflows/${published.id}/runs/${body.leadId}/recover`, {
      action: 'retry',
      note: 'receiver fixed',
    });
    expect(recovered.status).toBe(200);
    const done = await runIn(published.id, body.leadId, 'completed');
    expect(done.variables.after).toEqual({ value: 'hook said 201' });
    expect(done.decisions).toEqual([
      expect.objectContaining({
        nodeId: 'hook',
        action: 'retry',
        note: 'receiver fixed',
        via: 'api',
        decidedBy: `member:${operator.memberId} key:${operator.keyId}`,
      }),
    ]);
  });

  it('skip continues with the output the operator gives; end ends the run failed; a run not waiting gets 409', async () => {
    const receiver = await startReceiver(() => 404);
    const { published, campaign } = await journeyCampaign(failingHook(receiver.url));
    const skipped = await pushLead(campaign.id, '+14155550171');
    const ended = await pushLead(campaign.id, '+14155550172');
    await runIn(published.id, skipped.body.leadId, 'needs_recovery');
    await runIn(published.id, ended.body.leadId, 'needs_recovery');

    const badAction = await request('POST', `/workflows/${published.id}/runs/${skipped.body.leadId}/recover`, {
      action: 'rewind',
    });
    expect(badAction.status).toBe(400);
    await request('POST', `/workflows/${published.id}/runs/${skipped.body.leadId}/recover`, {
      action: 'skip',
      output: { status: 299, body: {} },
    });
    expect((await runIn(published.id, skipped.body.leadId, 'completed')).variables.after).toEqual({
      value: 'hook said 299',
    });

    await request('POST', `/workflows/${published.id}/runs/${ended.body.leadId}/recover`, { action: 'end' });
    expect((await runIn(published.id, ended.body.leadId, 'failed')).decisions).toHaveLength(1);
    expect((await db.lead.findUniqueOrThrow({ where: { id: ended.body.leadId } })).status).toBe('failed');

    const again = await request('POST', `/workflows/${published.id}/runs/${ended.body.leadId}/recover`, {
      action: 'retry',
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'run_not_awaiting_decision', status: 'failed' });
  });

  /** A pushed lead whose webhook node the receiver refuses with `status`: its run waits in needs_recovery. */
  async function stuckOnHook(status: number, phone: string) {
    const receiver = await startReceiver(() => status);
    const { published, campaign } = await journeyCampaign(failingHook(receiver.url));
    const { body, idempotencyKey } = await pushLead(campaign.id, phone);
    await runIn(published.id, body.leadId, 'needs_recovery');
    return {
      published,
      runId: body.leadId as string,
      handle: temporal.client.workflow.getHandle(leadWorkflowId(campaign.id, idempotencyKey)),
    };
  }

  it('resolves a run by the `recover` signal, as an operator does from the Temporal UI, recording who sent it', async () => {
    const { published, runId, handle } = await stuckOnHook(422, '+14155550173');
    await handle.signal(recoverSignal, {
      action: 'skip',
      output: { status: 204 },
      decidedBy: 'alice@ops',
      note: 'from the UI',
    });
    const done = await runIn(published.id, runId, 'completed');
    expect(done.variables.after).toEqual({ value: 'hook said 204' });
    expect(done.decisions).toEqual([
      expect.objectContaining({
        nodeId: 'hook',
        action: 'skip',
        via: 'temporal',
        decidedBy: 'alice@ops',
        note: 'from the UI',
      }),
    ]);
    expect((await handle.query(journeyRunStateQuery)).status).toBe('completed');
  });

  it('says what a run awaits in one shape, listed or read (a review node, then a failed node), and nothing once it has ended', async () => {
    const receiver = await startReceiver(() => 410);
    const { published, campaign } = await journeyCampaign(
      journey(
        [
          { id: 'start', type: 'start' },
          { id: 'look', type: 'review', data: { instructions: 'Check the lead' } },
          { id: 'hook', type: 'webhook', data: { url: receiver.url } },
          { id: 'done', type: 'end' },
        ],
        [
          ['start', 'look'],
          ['look', 'hook'],
          ['hook', 'done'],
        ],
      ),
    );
    const { body } = await pushLead(campaign.id, '+14155550174');
    // The list reads the rows; a read of a live run asks its workflow.
    const listed = async () =>
      ((await (await request('GET', `/workflows/${published.id}/runs`)).json()) as Run[]).find(
        (run) => run.id === body.leadId,
      )!;
    const awaitingIn = (read: () => Promise<Run>, nodeId: string) =>
      until(read, (run) => run.awaiting?.nodeId === nodeId);

    const review = await awaitingIn(() => readRun(published.id, body.leadId), 'look');
    expect(review.awaiting).toEqual({
      nodeId: 'look',
      kind: 'review',
      reason: 'Check the lead',
      errorType: null,
      allowedActions: ['skip', 'end'],
    });
    expect((await awaitingIn(listed, 'look')).awaiting).toEqual(review.awaiting);

    await request('POST', `/workflows/${published.id}/runs/${body.leadId}/recover`, {
      action: 'skip',
      output: { decision: 'approved' },
    });
    const failed = await awaitingIn(() => readRun(published.id, body.leadId), 'hook');
    expect(failed.awaiting).toEqual({
      nodeId: 'hook',
      kind: 'recovery',
      reason: expect.stringContaining('410'),
      errorType: 'journey_webhook_rejected',
      allowedActions: ['retry', 'skip', 'end'],
    });
    expect((await awaitingIn(listed, 'hook')).awaiting).toEqual(failed.awaiting);

    await request('POST', `/workflows/${published.id}/runs/${body.leadId}/recover`, { action: 'end' });
    expect((await runIn(published.id, body.leadId, 'failed')).awaiting).toBeNull();
    expect((await listed()).awaiting).toBeNull();
    // SQL NULL, not a JSON value such as {"set": null}.
    expect(
      await db.$queryRaw`SELECT recovery IS NULL AS cleared FROM "JourneyRun" WHERE id = ${body.leadId}::uuid`,
    ).toEqual([{ cleared: true }]);
  });

  it('the `recover` Update refuses a decision without decidedBy, recording nothing; the signal keeps its fallback, "unknown operator"', async () => {
    const { published, runId, handle } = await stuckOnHook(400, '+14155550175');
    for (const anonymous of [{}, { decidedBy: '  ' }]) {
      const refused = await handle
        .executeUpdate(recoverUpdate, { args: [{ action: 'skip', output: { status: 200 }, ...anonymous }] })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
      expect((refused as WorkflowUpdateFailedError).cause).toMatchObject({
        type: 'invalid_body',
        message: expect.stringContaining('decidedBy'),
      });
    }
    // Refused by the validator: not in the history at all, and the run still waits.
    const { events } = await handle.fetchHistory();
    expect(
      events!.filter((event) =>
        Object.entries(event).some(([name, value]) => name.startsWith('workflowExecutionUpdate') && value),
      ),
    ).toEqual([]);
    expect((await handle.query(journeyRunStateQuery)).awaiting).toMatchObject({ nodeId: 'hook', kind: 'recovery' });

    await handle.signal(recoverSignal, { action: 'skip', output: { status: 200 } });
    const done = await runIn(published.id, runId, 'completed');
    expect(done.decisions).toEqual([
      expect.objectContaining({ nodeId: 'hook', action: 'skip', decidedBy: 'unknown operator', via: 'temporal' }),
    ]);
  });

  it('the repair migration clears the {"set": null} that runs which moved on kept, and leaves a waiting run as it is', async () => {
    const published = await publishedJourney(
      db,
      operator.workspaceId,
      journey(
        [
          { id: 'start', type: 'start' },
          { id: 'look', type: 'review', data: { instructions: 'Check it' } },
          { id: 'done', type: 'end' },
        ],
        [
          ['start', 'look'],
          ['look', 'done'],
        ],
      ),
    );
    // Rows as the release before wrote them; their runs are gone from Temporal, so reads answer from the rows.
    const row = (status: 'running' | 'completed' | 'needs_recovery', recovery: object) =>
      db.journeyRun.create({
        data: {
          id: randomUUID(),
          workspaceId: operator.workspaceId,
          journeyId: published.id,
          revision: 1,
          temporalWorkflowId: `repair-${randomUUID()}`,
          status,
          trigger: { phone: null, name: null, fields: {} },
          startedBy: 'test',
          recovery,
          ...(status === 'completed' && { endedAt: new Date() }),
        },
      });
    const finished = await row('completed', { set: null });
    const moving = await row('running', { set: null });
    const waiting = await row('needs_recovery', { nodeId: 'look', error: 'Check it', errorType: null });
    const migrations = new URL('../../prisma/migrations/', import.meta.url);
    const repair = readdirSync(migrations).find((name) => name.endsWith('_repair_journey_run_recovery'))!;
    await db.$executeRawUnsafe(readFileSync(new URL(`${repair}/migration.sql`, migrations), 'utf8'));

    expect((await readRun(published.id, finished.id)).awaiting).toBeNull();
    expect((await readRun(published.id, moving.id)).awaiting).toBeNull();
    expect((await readRun(published.id, waiting.id)).awaiting).toEqual({
      nodeId: 'look',
      kind: 'review',
      reason: 'Check it',
      errorType: null,
      allowedActions: ['skip', 'end'],
    });
    expect(
      await db.$queryRaw`SELECT id FROM "JourneyRun" WHERE "workflowId" = ${published.id}::uuid AND recovery IS NOT NULL`,
    ).toEqual([{ id: waiting.id }]);
  });
});

describe('runs started and cancelled by hand', () => {
  it('starts a run with trigger fields (workflows.run), reports its live state, and cancels it', async () => {
    const definition = journey(
      [
        { id: 'start', type: 'start', data: { fields: [{ name: 'orderId', type: 'string', required: true }] } },
        { id: 'nap', type: 'wait', data: { seconds: 3600 } },
        { id: 'done', type: 'end' },
      ],
      [
        ['start', 'nap'],
        ['nap', 'done'],
      ],
    );
    const published = await publishedJourney(db, operator.workspaceId, definition);
    const missing = await request('POST', `/workflows/${published.id}/runs`, { fields: {} });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: 'invalid_body', issues: [{ path: ['fields', 'orderId'] }] });

    const started = await request('POST', `/workflows/${published.id}/runs`, { fields: { orderId: 'A-1' } });
    expect(started.status).toBe(201);
    const run = (await started.json()) as Run;
    expect(run).toMatchObject({
      status: 'running',
      leadId: null,
      campaignId: null,
      startedBy: `key:${operator.keyId}`,
    });
    const waiting = await until(
      () => readRun(published.id, run.id),
      (current) => current.currentNodeId === 'nap' && current.nextWakeAt !== null,
    );
    expect(Date.parse(waiting.nextWakeAt) - Date.now()).toBeGreaterThan(3_000_000);
    expect(waiting.variables.start.fields).toEqual({ orderId: 'A-1' });

    expect((await request('POST', `/workflows/${published.id}/runs/${run.id}/cancel`)).status).toBe(202);
    expect((await runIn(published.id, run.id, 'cancelled')).endedAt).not.toBeNull();
    expect((await request('POST', `/workflows/${published.id}/runs/${run.id}/cancel`)).status).toBe(409);
  });

  it('refuses runs of an unpublished journey, and keys without workflows.run or the workflows feature', async () => {
    const draft = await saveJourney(db, operator.workspaceId, {
      name: 'Draft',
      definition: journey(
        [
          { id: 'start', type: 'start' },
          { id: 'done', type: 'end' },
        ],
        [['start', 'done']],
      ),
    });
    const refused = await request('POST', `/workflows/${draft.id}/runs`, { fields: {} });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: 'workflow_not_published' });
    const viewer = await createTestWorkspace(db, { scopes: ['workflows.view'], settings: { features: ['workflows'] } });
    const forbidden = await api.request('POST', `/workflows/${draft.id}/runs`, {
      key: viewer.key,
      body: { fields: {} },
    });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toEqual({ error: 'forbidden', requiredPermission: 'workflows.run' });
    const noFeature = await createTestWorkspace(db, { scopes: ['workflows.view'] });
    const gated = await api.request('GET', '/workflows', { key: noFeature.key });
    expect(gated.status).toBe(403);
    expect(await gated.json()).toMatchObject({ error: 'feature_not_enabled' });
  });
});
