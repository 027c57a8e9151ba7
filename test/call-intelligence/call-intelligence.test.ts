import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { callIntelligenceSchema, type CallIntelligence } from '../../lib/call-intelligence/call-intelligence';
import { simulatedConversation } from '../../simulators/simulated-carrier/conversation';
import { startCallIntelligence } from '../../lib/temporal/start-call-intelligence';
import { transcriptSchema } from '../../lib/calls/transcript';
import { VOICES } from '../../lib/voices/voices';
import { callIntelligenceWorkflowId } from '../../lib/temporal/workflow-ids';
import { insertAgent } from '../support/agents';
import { SALES_FIELDS, SALES_LEAD, SALES_SCRIPT } from '../support/call-intelligence';
import { startTestApi } from '../support/api';
import { insertAnsweredCall } from '../support/calls';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db);
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });

const owner = await createTestWorkspace(db, {
  scopes: ['calls.view', 'calls.edit', 'intel.view'],
  settings: { plan: 'basic' },
});
const reader = await createTestWorkspace(db, { scopes: ['calls.view'] });
const stranger = await createTestWorkspace(db, { scopes: ['calls.view', 'calls.edit'] });

const SCRIPT = SALES_SCRIPT;
const FIELDS = SALES_FIELDS;
const LEAD = SALES_LEAD;

async function createAgent(workspace: TestWorkspace, extractionFields: object[] = FIELDS) {
  return insertAgent(db, workspace.workspaceId, {
    name: 'Ana',
    voiceId: VOICES[0]!.id,
    script: SCRIPT,
    extractionFields,
  });
}

/** An answered call of the workspace placed with an agent, its lead named and with fields; `details` overrides columns. */
async function answeredCall(workspace: TestWorkspace, details: Record<string, unknown> = {}) {
  const agent = await createAgent(workspace);
  const call = await insertAnsweredCall(db, workspace, {
    agentId: agent.id,
    answeredBy: 'human',
    carrierStatus: 'completed',
    transcript: simulatedConversation({
      agent: { script: SCRIPT, extractionFields: FIELDS, language: 'en-US' },
      lead: LEAD,
      answeredBy: 'human',
      durationMs: 41_000,
      seed: 'seed-1',
    }),
    ...details,
  });
  await db.lead.update({ where: { id: call.leadId! }, data: { name: LEAD.name, fields: LEAD.fields } });
  return { call, agent };
}

const storedIntelligence = async (callId: string) =>
  callIntelligenceSchema.nullable().parse((await db.call.findUniqueOrThrow({ where: { id: callId } })).intelligence);

const valuesOf = (intelligence: CallIntelligence | null) =>
  intelligence &&
  Object.fromEntries(Object.entries(intelligence.extraction).map(([name, field]) => [name, field.value]));

async function send(method: string, path: string, key: string, body?: unknown) {
  const response = await api.request(method, path, { key, body });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as any };
}

describe('callIntelligenceWorkflow', () => {
  it('extracts, evaluates and stores the intelligence of a call with a transcript, once for the call', async () => {
    const { call } = await answeredCall(owner);
    const started = await startCallIntelligence(temporal.client, temporal.taskQueue, call.id);
    expect(started.workflowId).toBe(callIntelligenceWorkflowId(call.id));
    // A second start of the same call is harmless: the same workflow.
    expect(await startCallIntelligence(temporal.client, temporal.taskQueue, call.id)).toEqual(started);
    const result = await temporal.client.workflow.getHandle(started.workflowId).result();
    expect(result).toEqual({ status: 'computed', score: 100 });

    const intelligence = await storedIntelligence(call.id);
    expect(valuesOf(intelligence)).toEqual({ seats: 25, budget_owner: true, plan: 'growth', start_date: '2027-01-15' });
    expect(intelligence).toMatchObject({
      provider: 'rule-based',
      jobId: started.workflowId,
      evaluation: { score: 100 },
    });
    expect(intelligence!.extraction.seats!.evidence).toMatch(/25/);

    const detail = await send('GET', `/calls/${call.id}`, owner.key);
    expect(detail.status).toBe(200);
    expect(detail.body.intelligence).toEqual(intelligence);
    expect(detail.body).toMatchObject({ evaluationScore: 100, extractedFields: valuesOf(intelligence) });
    const list = await send('GET', '/calls', owner.key);
    expect(list.body.items.find((item: { id: string }) => item.id === call.id)).toMatchObject({
      evaluationScore: 100,
      extractedFields: { seats: 25, budget_owner: true, plan: 'growth', start_date: '2027-01-15' },
    });
  });

  it('ends as no_transcript and stores nothing for a call that never reached the carrier', async () => {
    const { call } = await answeredCall(owner, { transcript: undefined, providerCallId: null });
    const { workflowId } = await startCallIntelligence(temporal.client, temporal.taskQueue, call.id);
    expect(await temporal.client.workflow.getHandle(workflowId).result()).toEqual({ status: 'no_transcript' });
    expect((await db.call.findUniqueOrThrow({ where: { id: call.id } })).intelligence).toBeNull();
  });

  it('fetches the transcript of a call from the simulated carrier (over HTTP) when the call has none stored', async () => {
    const agent = await createAgent(owner);
    const carrierAgent = {
      id: agent.id,
      language: 'en-US',
      voiceId: agent.voiceId,
      script: SCRIPT,
      extractionFields: FIELDS,
    };
    const attemptId = `${randomUUID()}:1`;
    const { providerCallId } = await carrier.client.dial({
      attemptId,
      from: null,
      to: '+14155550131',
      agent: carrierAgent,
      lead: LEAD,
      statusCallbackUrl: `${api.baseUrl}/telephony/simulated/events`,
    });
    const { call } = await answeredCall(owner, { transcript: undefined, providerCallId, agentId: agent.id });
    const { workflowId } = await startCallIntelligence(temporal.client, temporal.taskQueue, call.id);
    expect(await temporal.client.workflow.getHandle(workflowId).result()).toMatchObject({ status: 'computed' });

    const stored = await db.call.findUniqueOrThrow({ where: { id: call.id } });
    const transcript = transcriptSchema.parse(stored.transcript);
    expect(transcript).toEqual(await carrier.client.transcript(providerCallId));
    expect(transcript[0]).toMatchObject({ speaker: 'agent', text: 'Hi Maria, this is Ana from Acme.' });
    expect(valuesOf(await storedIntelligence(call.id))).toEqual({
      seats: 25,
      budget_owner: true,
      plan: 'growth',
      start_date: '2027-01-15',
    });
  }, 60_000);
});

describe('POST /calls/{id}/intelligence', () => {
  it('re-runs extraction and evaluation as a job: 202, and the call shows the job once done', async () => {
    const { call, agent } = await answeredCall(owner);
    // The agent gains a field after the call: the re-run fills it from the same transcript.
    await db.agent.update({
      where: { id: agent.id },
      data: { extractionFields: [...FIELDS, { name: 'company', type: 'string', description: '' }] },
    });
    const response = await send('POST', `/calls/${call.id}/intelligence`, owner.key);
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ callId: call.id, status: 'queued' });
    expect(response.body.jobId).toMatch(new RegExp(`^${callIntelligenceWorkflowId(call.id)}-rerun-`));

    const done = await until(
      () => send('GET', `/calls/${call.id}`, owner.key),
      (detail) => detail.body.intelligence?.jobId === response.body.jobId,
    );
    // Stored as jsonb: keys in PostgreSQL's order, not the agent's.
    expect(Object.keys(done.body.intelligence.extraction).sort()).toEqual([
      'budget_owner',
      'company',
      'plan',
      'seats',
      'start_date',
    ]);
    expect(done.body.intelligence.extraction.company).toEqual({ value: null, confidence: 0, evidence: null });
    // fields_filled: 4 of 5.
    expect(done.body.evaluationScore).toBe(95);

    // Each request is a job of its own.
    const again = await send('POST', `/calls/${call.id}/intelligence`, owner.key);
    expect(again.status).toBe(202);
    expect(again.body.jobId).not.toBe(response.body.jobId);
  });

  it('answers 409 call_has_no_transcript for a call without one, and starts nothing', async () => {
    const { call } = await answeredCall(owner, { transcript: undefined });
    expect(await send('POST', `/calls/${call.id}/intelligence`, owner.key)).toEqual({
      status: 409,
      body: { error: 'call_has_no_transcript' },
    });
    const { call: empty } = await answeredCall(owner, { transcript: [] });
    expect((await send('POST', `/calls/${empty.id}/intelligence`, owner.key)).status).toBe(409);
    const runs = temporal.client.workflow.list({
      query: `WorkflowId STARTS_WITH "${callIntelligenceWorkflowId(call.id)}"`,
    });
    for await (const run of runs) throw new Error(`a workflow was started: ${run.workflowId}`);
  });

  it("needs calls.edit, and answers the same 403 for another workspace's call, an unknown id and a non-UUID", async () => {
    const { call } = await answeredCall(owner);
    expect(await send('POST', `/calls/${call.id}/intelligence`, reader.key)).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'calls.edit' },
    });
    for (const id of [call.id, randomUUID(), 'not-a-uuid'])
      expect(await send('POST', `/calls/${id}/intelligence`, stranger.key)).toEqual({
        status: 403,
        body: { error: 'forbidden' },
      });
    expect(await storedIntelligence(call.id)).toBeNull();
  });
});

describe('exports', () => {
  it('carry the evaluation score and the extracted fields as columns', async () => {
    const { call } = await answeredCall(owner);
    const { workflowId } = await startCallIntelligence(temporal.client, temporal.taskQueue, call.id);
    await temporal.client.workflow.getHandle(workflowId).result();
    const { call: pending } = await answeredCall(owner);
    // Both calls in one campaign: the second has no intelligence yet.
    await db.call.update({ where: { id: pending.id }, data: { campaignId: call.campaignId } });

    const response = await api.request('POST', `/campaigns/${call.campaignId}/exports`, {
      key: owner.key,
      body: { columns: ['callId', 'evaluationScore', 'extractedFields'] },
    });
    expect(response.status).toBe(200);
    const [header, ...rows] = parse(Buffer.from(await response.arrayBuffer()), { bom: true }) as string[][];
    expect(header).toEqual(['callId', 'evaluationScore', 'extractedFields']);
    const byId = Object.fromEntries(rows.map(([id, score, fields]) => [id, [score, fields]]));
    expect(byId[call.id]![0]).toBe('100');
    expect(JSON.parse(byId[call.id]![1]!)).toEqual({
      seats: 25,
      budget_owner: true,
      plan: 'growth',
      start_date: '2027-01-15',
    });
    expect(byId[pending.id]).toEqual(['', '']);
  });
});
