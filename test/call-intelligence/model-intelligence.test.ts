// Call intelligence by a model (docs/features/call-intelligence.md#by-a-model): the durable job with
// INTELLIGENCE_PROVIDER openai-twin against the OpenAI twin (real PostgreSQL, Temporal, API and simulated carrier), its
// fallback to the rules, and the validation of the model's answer.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  extractCallFields,
  storeCallIntelligence,
  type CallIntelligenceDependencies,
} from '../../activities/call-intelligence/call-intelligence';
import { EVALUATION_RULES, evaluateCall } from '../../lib/call-intelligence/call-evaluation';
import { callIntelligenceSchema, type CallIntelligence } from '../../lib/call-intelligence/call-intelligence';
import {
  ModelIntelligenceFailure,
  analysisOf,
  createModelIntelligence,
  intelligenceJsonSchema,
  transcriptLine,
} from '../../lib/call-intelligence/model-intelligence';
import { extractByRules } from '../../lib/call-intelligence/rule-based-extraction';
import { simulatedConversation } from '../../simulators/simulated-carrier/conversation';
import type { Transcript } from '../../lib/calls/transcript';
import { parseConfig } from '../../lib/config';
import { MODEL_BOUNDS_DEFAULTS } from '../../lib/openai-client';
import { callIntelligenceModelFromConfig } from '../../lib/providers';
import { startCallIntelligence } from '../../lib/temporal/start-call-intelligence';
import { VOICES } from '../../lib/voices/voices';
import { strictSchemaProblem } from '../../simulators/openai-twin/structured';
import { insertAgent } from '../support/agents';
import { SALES_FIELDS, SALES_LEAD, SALES_SCRIPT } from '../support/call-intelligence';
import { startTestApi } from '../support/api';
import { insertAnsweredCall } from '../support/calls';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { carrierDescription } from '../support/carrier-openapi';
import { useTestDatabase } from '../support/database';
import { OPENAI_TWIN_API_KEY, startOpenAiTwin } from '../support/openai-twin';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db);
const { twin, baseURL } = await startOpenAiTwin();
const TIMEOUT_MS = 1_500;
// The worker's model as the worker builds it from its configuration (lib/providers.ts).
const config = parseConfig({
  DATABASE_URL: url,
  INTELLIGENCE_PROVIDER: 'openai-twin',
  INTELLIGENCE_BASE_URL: baseURL,
  INTELLIGENCE_MODEL: 'gpt-twin',
  INTELLIGENCE_API_KEY: OPENAI_TWIN_API_KEY,
  INTELLIGENCE_TIMEOUT_MS: String(TIMEOUT_MS),
});
const model = callIntelligenceModelFromConfig(config)!;
await startTestWorker(temporal.taskQueue, {
  db,
  ...carrierDependencies(carrier, api),
  callIntelligenceModel: model,
});
const owner = await createTestWorkspace(db, { scopes: ['calls.view', 'calls.edit'] });
const openai = carrierDescription('openai');

const SCRIPT = { ...SALES_SCRIPT, questions: [...SALES_SCRIPT.questions, 'Anything else?'] };
const FIELDS = [
  ...SALES_FIELDS.map((field) =>
    field.name === 'seats' ? { ...field, description: 'How many seats the lead needs.' } : field,
  ),
  { name: 'company_name', type: 'string', description: "The lead's company." },
];
const LEAD = SALES_LEAD;
const EXPECTED = { seats: 25, budget_owner: true, plan: 'growth', start_date: '2027-01-15', company_name: null };
/** A tool the agent used during the call: a turn of its own in the transcript. */
const TOOL_TURN = {
  speaker: 'tool' as const,
  text: 'schedule_callback',
  offsetMs: 9_000,
  tool: { name: 'schedule_callback' as const, arguments: { when: 'tomorrow' }, result: 'Callback booked.', ok: true },
};

function transcript(): Transcript {
  return [
    ...simulatedConversation({
      agent: { script: SCRIPT, extractionFields: FIELDS, language: 'en-US' },
      lead: LEAD,
      answeredBy: 'human',
      durationMs: 9_000,
      seed: 'seed-model',
    }),
    TOOL_TURN,
  ];
}

/**
 * An answered call of 9 s (the rules give call_length no points, and company_name is asked by no question: 85; the
 * twin's evaluation gives every rule its most: 100), with the agent's script and fields.
 */
async function answeredCall() {
  const agent = await insertAgent(db, owner.workspaceId, {
    name: 'Ana',
    voiceId: VOICES[0]!.id,
    script: SCRIPT,
    extractionFields: FIELDS,
  });
  return insertAnsweredCall(db, owner, {
    agentId: agent.id,
    answeredBy: 'human',
    carrierStatus: 'completed',
    durationMs: 9_000,
    transcript: transcript(),
  });
}

const stored = async (callId: string) =>
  callIntelligenceSchema.parse((await db.call.findUniqueOrThrow({ where: { id: callId } })).intelligence);
const valuesOf = (intelligence: CallIntelligence) =>
  Object.fromEntries(Object.entries(intelligence.extraction).map(([name, field]) => [name, field.value]));

async function computed(callId: string) {
  const { workflowId } = await startCallIntelligence(temporal.client, temporal.taskQueue, callId);
  return { workflowId, result: await temporal.client.workflow.getHandle(workflowId).result() };
}

/** What the rules alone give the call (the fallback). */
function rulesOf() {
  const turns = transcript();
  const extraction = extractByRules(FIELDS, turns);
  const evaluation = evaluateCall({
    script: SCRIPT,
    fieldNames: FIELDS.map((field) => field.name),
    transcript: turns,
    extracted: Object.fromEntries(Object.entries(extraction).map(([name, field]) => [name, field.value])),
    answeredBy: 'human',
    durationMs: 9_000,
  });
  return { extraction, evaluation };
}

beforeEach(() => twin.reset());

describe('call intelligence by the model, over the OpenAI twin', () => {
  it("sends the agent's fields and the evaluation rules as a strict json_schema, and stores the model's answer", async () => {
    const call = await answeredCall();
    const { workflowId, result } = await computed(call.id);
    expect(result).toEqual({ status: 'computed', score: 100 });

    // One request, as the vendored description has it, with a strict schema of the agent's fields.
    expect(twin.requests).toHaveLength(1);
    const body = twin.requests[0]!.body as Record<string, any>;
    expect(
      openai.requestProblems({ method: 'post', path: '/chat/completions' }, { contentType: 'application/json', body }),
    ).toEqual([]);
    expect(body.model).toBe('gpt-twin');
    // The answer is bounded (MODEL_MAX_TOKENS_INTELLIGENCE's default here).
    expect(body.max_tokens).toBe(MODEL_BOUNDS_DEFAULTS.intelligenceMaxTokens);
    expect(body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'call_intelligence', strict: true },
    });
    const schema = body.response_format.json_schema.schema;
    expect(strictSchemaProblem(schema)).toBeNull();
    const fields = schema.properties.extraction.properties;
    expect(Object.keys(fields)).toEqual(FIELDS.map((field) => field.name));
    expect(schema.properties.extraction.required).toEqual(FIELDS.map((field) => field.name));
    expect(fields.seats.description).toBe('How many seats the lead needs.');
    expect(fields.seats.properties.value.anyOf).toEqual([{ type: 'number' }, { type: 'null' }]);
    expect(fields.budget_owner.properties.value.anyOf).toEqual([{ type: 'boolean' }, { type: 'null' }]);
    expect(fields.plan.properties.value.anyOf).toEqual([
      { type: 'string', enum: ['starter', 'growth'] },
      { type: 'null' },
    ]);
    expect(fields.start_date.properties.value.anyOf[0]).toMatchObject({ type: 'string', format: 'date' });
    expect(fields.company_name.properties.value.anyOf).toEqual([{ type: 'string' }, { type: 'null' }]);
    expect(fields.seats.required).toEqual(['value', 'confidence', 'evidence']);
    const rules = schema.properties.evaluation.properties;
    expect(Object.keys(rules)).toEqual(Object.keys(EVALUATION_RULES));
    for (const [rule, most] of Object.entries(EVALUATION_RULES))
      expect(rules[rule].properties.points).toEqual({ type: 'integer', minimum: 0, maximum: most });

    // The real transcript, a tool turn as what it is; the script and the call's facts in the system message.
    const [system, user] = body.messages as Array<{ role: string; content: string }>;
    expect(system!.role).toBe('system');
    expect(system!.content).toContain('- opening line: Hi {{name}}, this is Ana from Acme.');
    expect(system!.content).toContain('- talk time: 9 s');
    expect(system!.content).toContain('- seats (number): How many seats the lead needs.');
    expect(user!.role).toBe('user');
    expect(user!.content.split('\n')).toEqual(transcript().map(transcriptLine));
    expect(user!.content).toContain('[0:09] tool: schedule_callback {"when":"tomorrow"} -> ok: Callback booked.');

    const intelligence = await stored(call.id);
    expect(intelligence.provider).toBe('openai-twin');
    expect(intelligence.fallback).toBeUndefined();
    expect(intelligence.jobId).toBe(workflowId);
    expect(valuesOf(intelligence)).toEqual(EXPECTED);
    expect(intelligence.extraction.seats).toEqual({
      value: 25,
      confidence: 0.9,
      evidence: expect.stringMatching(/25/),
    });
    expect(intelligence.extraction.company_name).toEqual({ value: null, confidence: 0, evidence: null });
    // The model's evaluation, in the rules' shape: every rule, its most, the twin's words; the score their sum.
    expect(intelligence.evaluation).toEqual({
      score: 100,
      reasons: Object.entries(EVALUATION_RULES).map(([rule, most]) => ({
        rule,
        points: most,
        maxPoints: most,
        detail: `The OpenAI twin's detail of ${rule}.`,
      })),
    });
    expect(rulesOf().evaluation.score).toBeLessThan(100);

    // GET /calls/{id} answers it as stored, with the same intelligence columns.
    const response = await api.request('GET', `/calls/${call.id}`, { key: owner.key });
    const detail = (await response.json()) as Record<string, unknown>;
    expect(detail.intelligence).toEqual(intelligence);
    expect(detail).toMatchObject({ evaluationScore: 100, extractedFields: EXPECTED });
  });

  it.each([
    {
      name: 'an answer that is not JSON (cut short)',
      reply: { malformed: 'truncated' as const },
      reason: 'invalid_output',
      detail: /cut short/,
    },
    {
      name: 'JSON that breaks the schema',
      reply: { malformed: 'off_schema' as const },
      reason: 'invalid_output',
      detail: /does not match the schema \(extraction\.seats\.value: invalid_type/,
    },
    {
      name: 'words instead of JSON',
      reply: { content: 'Sure! Seats: 25.' },
      reason: 'invalid_output',
      detail: /not JSON/,
    },
    { name: 'a 500', reply: { status: 500 }, reason: 'http_error', detail: /^HTTP 500$/ },
    { name: 'no answer in time', reply: { hang: true }, reason: 'timeout', detail: /no answer in time/ },
  ])('falls back to the rules for $name, and records why', async ({ reply, reason, detail }) => {
    const call = await answeredCall();
    twin.script(reply);
    const started = Date.now();
    const { result } = await computed(call.id);
    const rules = rulesOf();
    expect(result).toEqual({ status: 'computed', score: rules.evaluation.score });
    if (reason === 'timeout') expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(twin.requests).toHaveLength(1);
    const intelligence = await stored(call.id);
    expect(intelligence.provider).toBe('rule-based');
    expect(intelligence.fallback).toEqual({ from: 'openai-twin', reason, detail: expect.stringMatching(detail) });
    expect(intelligence.extraction).toEqual(rules.extraction);
    expect(intelligence.evaluation).toEqual(rules.evaluation);
  });
});

describe("the model's answer", () => {
  const answer = () => ({
    extraction: {
      seats: { value: 25, confidence: 0.8, evidence: 'About 25.' },
      budget_owner: { value: true, confidence: 1, evidence: 'Yes.' },
      plan: { value: 'growth', confidence: 0.7, evidence: 'Growth.' },
      start_date: { value: '2027-01-15', confidence: 0.9, evidence: 'January 15, 2027.' },
      company_name: { value: null, confidence: 0.5, evidence: null },
    },
    evaluation: Object.fromEntries(
      Object.entries(EVALUATION_RULES).map(([rule, most]) => [rule, { points: Math.floor(most / 2), detail: rule }]),
    ),
  });
  const problemOf = (mutate: (value: any) => void) => {
    const value = answer();
    mutate(value);
    try {
      analysisOf(FIELDS, JSON.stringify(value));
      return null;
    } catch (error) {
      expect(error).toBeInstanceOf(ModelIntelligenceFailure);
      return (error as ModelIntelligenceFailure).detail;
    }
  };

  it('is read into the stored shape: a null value has confidence 0, the score is the sum of the points', () => {
    const analysis = analysisOf(FIELDS, JSON.stringify(answer()));
    expect(analysis.extraction.company_name).toEqual({ value: null, confidence: 0, evidence: null });
    expect(analysis.evaluation.score).toBe(10 + 5 + 12 + 12 + 5 + 5);
    expect(analysis.evaluation.reasons[2]).toEqual({
      rule: 'questions_asked',
      points: 12,
      maxPoints: 25,
      detail: 'questions_asked',
    });
    expect(problemOf(() => undefined)).toBeNull();
  });

  it('is refused when it breaks the schema sent', () => {
    expect(problemOf((value) => (value.extraction.plan.value = 'platinum'))).toMatch(/extraction\.plan\.value/);
    expect(problemOf((value) => (value.extraction.start_date.value = '2027-02-30'))).toMatch(/start_date\.value/);
    expect(problemOf((value) => (value.extraction.seats.value = '25'))).toMatch(/seats\.value: invalid_type/);
    expect(problemOf((value) => (value.extraction.budget_owner.confidence = 1.5))).toMatch(/confidence: too_big/);
    expect(problemOf((value) => delete value.extraction.company_name)).toMatch(/company_name/);
    expect(problemOf((value) => (value.extraction.extra = value.extraction.seats))).toMatch(/unrecognized_keys/);
    expect(problemOf((value) => (value.evaluation.call_length.points = 11))).toMatch(/call_length\.points: too_big/);
    expect(problemOf((value) => (value.evaluation.opening_said.points = 2.5))).toMatch(/opening_said\.points/);
    expect(problemOf((value) => delete value.evaluation.closing_said)).toMatch(/closing_said/);
    // The refusal never repeats the answer's words.
    expect(problemOf((value) => (value.extraction.plan.value = 'secret-words'))).not.toContain('secret-words');
  });

  it('is asked for with a strict schema made from the fields, whatever their number', () => {
    expect(strictSchemaProblem(intelligenceJsonSchema([]))).toBeNull();
    expect(strictSchemaProblem(intelligenceJsonSchema(FIELDS))).toBeNull();
    expect(intelligenceJsonSchema(FIELDS)).not.toHaveProperty('$schema');
  });
});

describe('the store', () => {
  it("writes the model's result once: a repeat of the activity with the same input writes the same", async () => {
    const call = await answeredCall();
    const dependencies: CallIntelligenceDependencies = {
      db,
      calls: carrier.client,
      callIntelligenceModel: createModelIntelligence({
        name: 'openai-compatible',
        baseURL,
        model: 'gpt-twin',
        apiKey: OPENAI_TWIN_API_KEY,
        timeoutMs: TIMEOUT_MS,
      }),
    };
    const extracted = await extractCallFields(dependencies, { callId: call.id });
    expect(extracted).toMatchObject({ provider: 'openai-compatible', evaluation: { score: 100 } });
    const input = { ...extracted, callId: call.id, computedAt: '2026-11-23T01:00:00.000Z', jobId: 'job-1' };
    await storeCallIntelligence(dependencies, input);
    const first = await stored(call.id);
    // The twin would now answer otherwise: the store does not ask it again.
    twin.script({ malformed: 'off_schema' });
    await storeCallIntelligence(dependencies, input);
    expect(await stored(call.id)).toEqual(first);
    expect(twin.requests).toHaveLength(1);
    expect(first).toMatchObject({ provider: 'openai-compatible', evaluation: { score: 100 } });
  });
});
