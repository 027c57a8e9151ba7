import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { testCallWorkflowId } from '../../lib/temporal/workflow-ids';
import type { TestCallResult } from '../../lib/test-calls/test-call';
import { VOICES } from '../../lib/voices/voices';
import { grantCredits } from '../../lib/door/workspace-admin';
import { insertAgent } from '../support/agents';
import { startTestApi } from '../support/api';
import { carrierDependencies, simulatedCarrierRecord, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startLossyCarrierPath } from '../support/lossy-carrier';
import { startTestWorker, unreachableTemporal, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { insertTestCall, startTestCallWorkflow as startTestCallWorkflowOf } from '../support/calls';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db);
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });

// A carrier that loses every terminal event: its calls end by reconciliation.
const lossy = await startLossyCarrierPath({ db, url, temporal });

const tester = await createTestWorkspace(db, { scopes: ['calls.test'] });
const reader = await createTestWorkspace(db, { scopes: ['calls.view'] });
const stranger = await createTestWorkspace(db, { scopes: ['calls.test'] });
// Test calls are billed (test/test-calls/test-call-billing.test.ts): enough credits that no call here is refused.
for (const workspace of [tester, stranger]) await grantCredits(db, workspace.workspaceId, 1_000);

const SCRIPT = {
  openingLine: 'Hi {{name}}, this is Ana from Acme.',
  questions: ['How many seats do you need?'],
  closing: 'Thanks, goodbye.',
};
const FIELDS = [{ name: 'seats', type: 'number', description: '' }];

async function createAgent(workspace: TestWorkspace) {
  return insertAgent(db, workspace.workspaceId, {
    name: 'Ana',
    voiceId: VOICES[0]!.id,
    script: SCRIPT,
    extractionFields: FIELDS,
  });
}

const agent = await createAgent(tester);
const strangersAgent = await createAgent(stranger);
const deletedAgent = await db.agent.update({
  where: { id: (await createAgent(tester)).id },
  data: { deletedAt: new Date() },
});
// The workspace's numbers: one that takes WhatsApp only, then its first voice number, then a second one.
const whatsappOnly = '+14155559001';
const firstVoice = '+14155559002';
const secondVoice = '+14155559003';
for (const [e164, voice] of [
  [whatsappOnly, false],
  [firstVoice, true],
  [secondVoice, true],
] as const)
  await db.phoneNumber.create({
    data: {
      workspaceId: tester.workspaceId,
      e164,
      country: 'US',
      region: '',
      capabilities: { voice, whatsapp: !voice },
      assignedAt: new Date(Date.now() + (e164 === whatsappOnly ? 0 : e164 === firstVoice ? 1 : 2) * 1000),
    },
  });

function placeTestCall(
  body: unknown,
  options: { key?: string; headers?: Record<string, string>; via?: typeof api } = {},
) {
  return (options.via ?? api).request('POST', '/calls/test', {
    key: options.key ?? tester.key,
    body,
    headers: options.headers,
  });
}

async function placed(body: unknown, options: Parameters<typeof placeTestCall>[1] = {}) {
  const response = await placeTestCall(body, options);
  expect(response.status).toBe(202);
  const answer = (await response.json()) as { callId: string; deduplicated: boolean };
  expect(answer.deduplicated).toBe(false);
  return answer.callId;
}

const resultOf = (callId: string, client = temporal.client) =>
  client.workflow.getHandle(testCallWorkflowId(callId)).result() as Promise<TestCallResult>;

const getCall = async (callId: string, key = tester.key) => {
  const response = await api.request('GET', `/calls/${callId}`, { key });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
};

/** What would show that something was placed: calls recorded, and calls the carrier took. */
const placedSoFar = async () => ({
  calls: await db.call.count({ where: { kind: 'test' } }),
  dialed: await simulatedCarrierRecord(db).count(`"attemptId" LIKE 'test:%'`),
});

/** A test call recorded as the API records it, its workflow not started yet. */
const recordedTestCall = (to: string, provider = 'simulated') =>
  insertTestCall(db, { workspaceId: tester.workspaceId, agentId: agent.id, to }, { provider });

const startTestCallWorkflow = (callId: string) => startTestCallWorkflowOf(temporal, callId);

describe('POST /calls/test', () => {
  it('places an answered call with the agent, readable at once and afterwards with its transcript and intelligence', async () => {
    const callId = await placed({
      agentId: agent.id,
      to: '+14155550130',
      lead: { name: 'Maria', fields: { seats: 25 } },
    });
    // Readable as soon as it is answered 202, before it has ended.
    expect(await getCall(callId)).toMatchObject({
      id: callId,
      kind: 'test',
      campaignId: null,
      leadId: null,
      phone: '+14155550130',
      agentId: agent.id,
      fromNumber: firstVoice,
    });
    expect(await resultOf(callId)).toEqual({ callId, outcome: 'answered', durationMs: 33_000 });
    const recorded = await db.call.findUniqueOrThrow({ where: { id: callId } });
    expect(recorded).toMatchObject({
      status: 'ended',
      carrierStatus: 'completed',
      answeredBy: 'human',
      workflowId: testCallWorkflowId(callId),
      provider: 'simulated',
    });
    expect(recorded.providerCallId).not.toBeNull();
    // The default subscription (TELEPHONY_STATUS_CALLBACK_EVENTS unset): the answer and the end, no ringing.
    const events = await db.callEvent.findMany({ where: { callId }, orderBy: { occurredAt: 'asc' } });
    expect(events.map((event) => event.status)).toEqual(['in-progress', 'completed']);
    expect(await simulatedCarrierRecord(db).call('"providerCallId" = $1', recorded.providerCallId!)).toMatchObject({
      statusCallbackEvents: ['in-progress'],
    });
    const withIntelligence = await until(
      () => getCall(callId),
      (call) => call.intelligence !== null,
    );
    const transcript = withIntelligence.transcript as Array<{ speaker: string; text: string }>;
    expect(transcript[0]).toMatchObject({ speaker: 'agent', text: 'Hi Maria, this is Ana from Acme.' });
    expect(withIntelligence).toMatchObject({ status: 'ended', outcome: 'answered', extractedFields: { seats: 25 } });

    // Listed by GET /calls with its kind; not under a campaign's filter.
    const list = await api.request('GET', '/calls?limit=200', { key: tester.key });
    const items = ((await list.json()) as { items: Array<{ id: string; kind: string }> }).items;
    expect(items.find((item) => item.id === callId)).toMatchObject({ kind: 'test', campaignId: null });
    const filtered = await api.request('GET', `/calls?campaignId=${randomUUID()}`, { key: tester.key });
    expect(await filtered.json()).toEqual({ total: 0, items: [] });
  });

  it('records a busy number busy, from the number asked for, without a transcript', async () => {
    const callId = await placed({ agentId: agent.id, to: '+14155550135', from: secondVoice });
    expect(await resultOf(callId)).toEqual({ callId, outcome: 'busy', durationMs: null });
    expect(await getCall(callId)).toMatchObject({
      kind: 'test',
      status: 'ended',
      outcome: 'busy',
      carrierStatus: 'busy',
      fromNumber: secondVoice,
      transcript: null,
      intelligence: null,
    });
  });

  it('reconciles a test call whose terminal event never comes with the carrier lookup', async () => {
    const callId = await placed({ agentId: agent.id, to: '+14155550122' }, { via: lossy.api });
    expect(await resultOf(callId, lossy.temporal.client)).toEqual({ callId, outcome: 'answered', durationMs: 32_000 });
    const events = await db.callEvent.findMany({ where: { callId }, orderBy: { occurredAt: 'asc' } });
    expect(events.map((event) => [event.status, event.eventId.startsWith('lookup:')])).toEqual([
      ['in-progress', false],
      ['completed', true],
    ]);
  });

  it('needs calls.test: a calls.view key is refused 403 naming it, and nothing is placed', async () => {
    const before = await placedSoFar();
    const response = await placeTestCall({ agentId: agent.id, to: '+14155550130' }, { key: reader.key });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: 'forbidden', requiredPermission: 'calls.test' });
    expect(await placedSoFar()).toEqual(before);
  });

  it('refuses bad input with 400 invalid_body at the field, and places nothing', async () => {
    const before = await placedSoFar();
    const cases: Array<[unknown, string]> = [
      [{ agentId: strangersAgent.id, to: '+14155550130' }, 'agentId'],
      [{ agentId: deletedAgent.id, to: '+14155550130' }, 'agentId'],
      [{ agentId: 'not-a-uuid', to: '+14155550130' }, 'agentId'],
      [{ agentId: randomUUID(), to: '+14155550130' }, 'agentId'],
      [{ agentId: agent.id, to: '4155550130' }, 'to'],
      [{ agentId: agent.id, to: '+1415' }, 'to'],
      [{ agentId: agent.id }, 'to'],
      [{ to: '+14155550130' }, 'agentId'],
      [{ agentId: agent.id, to: '+14155550130', from: whatsappOnly }, 'from'],
      [{ agentId: agent.id, to: '+14155550130', from: '+14155559999' }, 'from'],
      [{ agentId: agent.id, to: '+14155550130', from: 'nope' }, 'from'],
      [{ agentId: agent.id, to: '+14155550130', lead: { name: 'A', fields: [] } }, 'lead'],
      [{ agentId: agent.id, to: '+14155550130', campaignId: randomUUID() }, ''],
      [{ agentId: agent.id, to: '+14155550130', lead: { name: 'A\u0000', fields: {} } }, 'lead'],
      [{ agentId: agent.id, to: '+14155550130', lead: { fields: { note: { deep: 'x\u0000' } } } }, 'lead'],
    ];
    for (const [body, field] of cases) {
      const response = await placeTestCall(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      const answer = (await response.json()) as { error: string; issues: Array<{ path: string[] }> };
      expect(answer.error).toBe('invalid_body');
      if (field)
        expect(
          answer.issues.map((issue) => issue.path[0]),
          JSON.stringify(body),
        ).toContain(field);
    }
    const badKey = await placeTestCall(
      { agentId: agent.id, to: '+14155550130' },
      { headers: { 'Idempotency-Key': 'k'.repeat(256) } },
    );
    expect(badKey.status).toBe(400);
    expect(await placedSoFar()).toEqual(before);
  });

  it('refuses a number on the Do-Not-Call list with 409, and places nothing', async () => {
    await db.doNotCall.create({ data: { workspaceId: tester.workspaceId, phone: '+14155550140', source: 'api' } });
    const before = await placedSoFar();
    const response = await placeTestCall({ agentId: agent.id, to: '+14155550140' });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ error: 'number_on_do_not_call' });
    expect(await placedSoFar()).toEqual(before);
  });

  it('places one call per Idempotency-Key: a retried request, even concurrent ones, answers the same call', async () => {
    const key = randomUUID();
    const body = { agentId: agent.id, to: '+14155550131' };
    const before = await placedSoFar();
    const first = await placed(body, { headers: { 'Idempotency-Key': key } });
    const again = await placeTestCall(body, { headers: { 'Idempotency-Key': key } });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ callId: first, deduplicated: true });
    expect(await resultOf(first)).toMatchObject({ callId: first, outcome: 'answered' });
    // After the call ended too.
    const late = await placeTestCall(body, { headers: { 'Idempotency-Key': key } });
    expect(await late.json()).toEqual({ callId: first, deduplicated: true });
    expect(await placedSoFar()).toEqual({ calls: before.calls + 1, dialed: before.dialed + 1 });

    // Two requests with a new key at once: one call.
    const concurrentKey = randomUUID();
    const answers = await Promise.all(
      [0, 1].map(async () => {
        const response = await placeTestCall(body, { headers: { 'Idempotency-Key': concurrentKey } });
        return { status: response.status, ...((await response.json()) as { callId: string; deduplicated: boolean }) };
      }),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 202]);
    expect(answers[0]!.callId).toBe(answers[1]!.callId);
    await resultOf(answers[0]!.callId);
    // Another workspace's same key is its own call; no key at all is a new call each time.
    const strangers = await placed(
      { agentId: strangersAgent.id, to: '+14155550131' },
      { key: stranger.key, headers: { 'Idempotency-Key': key } },
    );
    expect(strangers).not.toBe(first);
    await resultOf(strangers);
    expect(await placedSoFar()).toEqual({ calls: before.calls + 3, dialed: before.dialed + 3 });
  });

  it('ends a call whose number was listed after the API took it do_not_call, never dialed', async () => {
    const callId = await recordedTestCall('+14155550141');
    // The number goes on the list after the API recorded the call, before its workflow dials.
    await db.doNotCall.create({ data: { workspaceId: tester.workspaceId, phone: '+14155550141', source: 'api' } });
    const before = await placedSoFar();
    await startTestCallWorkflow(callId);
    expect(await resultOf(callId)).toEqual({ callId, outcome: 'do_not_call', durationMs: null });
    expect(await getCall(callId)).toMatchObject({ status: 'ended', outcome: 'do_not_call', carrierStatus: null });
    expect(await placedSoFar()).toEqual(before);
  });

  it('records the call for the carrier that dials it, whatever the API recorded', async () => {
    const callId = await recordedTestCall('+14155550132', 'another-carrier');
    await startTestCallWorkflow(callId);
    expect(await resultOf(callId)).toEqual({ callId, outcome: 'answered', durationMs: 33_000 });
    expect(await db.call.findUniqueOrThrow({ where: { id: callId } })).toMatchObject({
      provider: 'simulated',
      carrierStatus: 'completed',
    });
  });

  it('answers 503 temporal_unavailable while Temporal cannot be reached, and leaves no call behind', async () => {
    const cutOff = await startTestApi({ db, url, temporal: await unreachableTemporal('nowhere') });
    const before = await placedSoFar();
    const response = await placeTestCall({ agentId: agent.id, to: '+14155550130' }, { via: cutOff });
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ error: 'temporal_unavailable' });
    expect(await placedSoFar()).toEqual(before);
  }, 30_000);

  it('is a concrete path: GET /calls/test is 405, not a call lookup', async () => {
    const response = await api.request('GET', '/calls/test', { key: tester.key });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it("keeps another workspace's test call out of reach: 403 on GET /calls/{id}", async () => {
    const callId = await placed({ agentId: agent.id, to: '+14155550136' });
    const response = await api.request('GET', `/calls/${callId}`, { key: stranger.key });
    expect(response.status).toBe(403);
    await resultOf(callId);
  });
});
