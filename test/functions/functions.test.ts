import http from 'node:http';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionDefinitionSchema, type FunctionDefinition } from '../../lib/functions/function-definition';
import { functionsOfCall } from '../../lib/functions/function-store';
import { bindFunction, createFunction } from '../../lib/functions/functions';
import { idempotencyKeyOf, invokeFunction } from '../../lib/functions/invoke-function';
import { prismaSql } from '../../lib/run-sql';
import { startTestApi } from '../support/api';
import { sealingAdminCli } from '../support/admin-cli';
import { insertAgent } from '../support/agents';
import { insertAnsweredCall } from '../support/calls';
import { useTestDatabase } from '../support/database';
import { testEgress } from '../support/egress';
import { listenOnLoopback } from '../support/http-receiver';
import { verifyFunctionRequest } from '../support/function-requests';
import { TEST_KEYRING, TEST_SECRETS_KEYS } from '../support/keyring';
import { useTemporalClient } from '../support/temporal';
import { createCallFunctions } from '../../api/conversation/conversation-functions';
import { createModelEngine } from '../../lib/conversation/model-engine';
import { createScriptEngine } from '../../lib/conversation/script-engine';
import { OPENAI_TWIN_API_KEY, agentCall, collect, recordingContext, startOpenAiTwin } from '../support/openai-twin';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const api = await startTestApi({ db, url, temporal: await useTemporalClient() });
const { admin, adminJson } = sealingAdminCli(url, TEST_SECRETS_KEYS);
const deps = { sql: prismaSql(db), egress: testEgress(), keyring: TEST_KEYRING };

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** The customer's endpoint: /book answers a result, /fail a 500, /slow never answers (until the file ends). */
async function startEndpoint() {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.url === '/slow') return;
      if (req.url === '/fail') return void res.writeHead(500).end('booking system down');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ result: 'Booked table 12\nfor 4 people.', reference: 'R-1' }));
    });
  });
  const base = `http://127.0.0.1:${await listenOnLoopback(server)}`;
  return { base, received };
}
const endpoint = await startEndpoint();
const { twin, baseURL } = await startOpenAiTwin();

const definition = (overrides: Record<string, unknown> = {}): FunctionDefinition =>
  functionDefinitionSchema.parse({
    name: 'book_table',
    description: 'Books a table at the restaurant.',
    parameters: { type: 'object', properties: { people: { type: 'integer' } }, required: ['people'] },
    presets: { customer: '{{lead.fields.customerId}}', phone: '{{lead.phone}}', call: 'call {{call.id}}' },
    url: `${endpoint.base}/book`,
    ...overrides,
  });

describe('custom functions', () => {
  it('are made by the operator CLI, which answers the signing secret once and refuses a definition over its caps', async () => {
    const owner = await createTestWorkspace(db);
    const file = path.join(os.tmpdir(), `function-${owner.workspaceId}.json`);
    writeFileSync(file, JSON.stringify({ ...definition(), parameters: deep(8) }));
    const refused = await admin(['function', 'create', '--workspace', owner.workspaceId, '--file', file]);
    expect(refused.code).toBe(64);
    expect(refused.stderr).toMatch(/--file: parameters: must nest at most 10 levels/);

    writeFileSync(file, JSON.stringify({ name: 'book_table', description: 'Books.', url: `${endpoint.base}/book` }));
    const made = await adminJson(['function', 'create', '--workspace', owner.workspaceId, '--file', file]);
    expect(made.signingSecret).toMatch(/^whsec_/);
    const stored = await db.customFunction.findUniqueOrThrow({ where: { id: made.id } });
    // The defaults the page states: POST, 20 s, no lines, an object schema without properties.
    expect(stored).toMatchObject({
      method: 'POST',
      timeoutMs: 20_000,
      fillerLine: null,
      parameters: { type: 'object' },
    });
    await expect(createFunction(db, TEST_KEYRING, owner.workspaceId, definition())).rejects.toThrow(/named book_table/);
    const second = await createFunction(db, TEST_KEYRING, owner.workspaceId, definition({ name: 'cancel_table' }));
    expect(second.signingSecret).toBeUndefined();
    expect(() => definition({ name: 'end_call' })).toThrow(/built-in tool/);
    expect(() => definition({ timeoutMs: 61_000 })).toThrow();
    expect(() => definition({ presets: { x: '{{lead.secret}}' } })).toThrow(/variable that does not exist/);
  });

  it('are listed with their agents by functions.view and deleted by functions.delete, another workspace refused', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['functions.view', 'functions.delete'] });
    const stranger = await createTestWorkspace(db, { scopes: ['functions.view', 'functions.delete'] });
    const agent = await insertAgent(db, owner.workspaceId);
    const fn = await createFunction(db, TEST_KEYRING, owner.workspaceId, definition());
    await bindFunction(db, owner.workspaceId, fn.id, agent.id);

    const listed = await api.request('GET', '/functions', { key: owner.key });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([
      expect.objectContaining({
        id: fn.id,
        name: 'book_table',
        agents: [{ id: agent.id, afterQuestion: null }],
        timeoutMs: 20_000,
        method: 'POST',
      }),
    ]);
    expect(await (await api.request('GET', '/functions', { key: stranger.key })).json()).toEqual([]);

    const notTheirs = await api.request('DELETE', `/functions/${fn.id}`, { key: stranger.key });
    expect(notTheirs.status).toBe(403);
    expect(await notTheirs.json()).toMatchObject({ error: 'forbidden' });
    expect((await api.request('DELETE', `/functions/${fn.id}`, { key: owner.key })).status).toBe(204);
    expect((await api.request('DELETE', `/functions/${fn.id}`, { key: owner.key })).status).toBe(403);
    expect(await (await api.request('GET', '/functions', { key: owner.key })).json()).toEqual([]);
    expect(await db.agentFunction.count({ where: { agentId: agent.id } })).toBe(0);
  });

  it('sends a signed request once per tool call, through the guard, and records each call on the call', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['calls.view'] });
    const agent = await insertAgent(db, owner.workspaceId);
    const { id: functionId, signingSecret } = await createFunction(db, TEST_KEYRING, owner.workspaceId, definition());
    for (const [name, url, timeoutMs] of [
      ['slow_booking', `${endpoint.base}/slow`, 1_000],
      ['failing_booking', `${endpoint.base}/fail`, 20_000],
      ['private_booking', 'http://10.0.0.1/book', 20_000],
    ] as const) {
      const made = await createFunction(db, TEST_KEYRING, owner.workspaceId, definition({ name, url, timeoutMs }));
      await bindFunction(db, owner.workspaceId, made.id, agent.id);
    }
    await bindFunction(db, owner.workspaceId, functionId, agent.id);
    const call = await insertAnsweredCall(db, owner, { agentId: agent.id });
    await db.lead.update({ where: { id: call.leadId! }, data: { fields: { customerId: 'C-77' } } });
    const bound = Object.fromEntries((await functionsOfCall(deps.sql, call.id)).map((fn) => [fn.name, fn]));
    expect(Object.keys(bound)).toEqual(['book_table', 'failing_booking', 'private_booking', 'slow_booking']);

    const booked = await invokeFunction(deps, {
      callId: call.id,
      toolCallId: 'call_1',
      fn: bound.book_table!,
      arguments: { people: 4, customer: 'spoofed by the model' },
    });
    expect(booked).toEqual({ ok: true, status: 'ok', result: 'Booked table 12 for 4 people.' });
    const [request] = endpoint.received.filter((received) => received.path === '/book');
    expect(verifyFunctionRequest(signingSecret!, request!.headers, request!.body)).toBe(true);
    expect(verifyFunctionRequest(signingSecret!, request!.headers, request!.body.replace('4', '5'))).toBe(false);
    expect(request!.headers['idempotency-key']).toBe(idempotencyKeyOf(call.id, 'call_1'));
    expect(JSON.parse(request!.body)).toEqual({
      function: 'book_table',
      toolCallId: 'call_1',
      call: { id: call.id },
      arguments: { people: 4, customer: 'spoofed by the model' },
      // Rendered from the call: the model's arguments cannot stand for them.
      presets: { customer: 'C-77', phone: '+14155550120', call: `call ${call.id}` },
    });

    // The same tool call again (a retry after a crash): not sent a second time.
    const again = await invokeFunction(deps, {
      callId: call.id,
      toolCallId: 'call_1',
      fn: bound.book_table!,
      arguments: { people: 4 },
    });
    expect(again).toMatchObject({ ok: false, status: 'repeated', result: expect.stringMatching(/already called/) });
    expect(endpoint.received.filter((received) => received.path === '/book')).toHaveLength(1);

    const slow = await invokeFunction(deps, {
      callId: call.id,
      toolCallId: 'call_2',
      fn: bound.slow_booking!,
      arguments: {},
    });
    expect(slow).toMatchObject({
      ok: false,
      status: 'timed_out',
      result: expect.stringMatching(/^Outcome unknown: .*not called again/),
    });
    const failed = await invokeFunction(deps, {
      callId: call.id,
      toolCallId: 'call_3',
      fn: bound.failing_booking!,
      arguments: {},
    });
    expect(failed).toMatchObject({
      status: 'http_error',
      result: expect.stringContaining('HTTP 500. booking system down'),
    });
    const privateAddress = await invokeFunction(deps, {
      callId: call.id,
      toolCallId: 'call_4',
      fn: bound.private_booking!,
      arguments: {},
    });
    expect(privateAddress).toMatchObject({ ok: false, status: 'refused' });
    const badArguments = await invokeFunction(deps, {
      callId: call.id,
      toolCallId: 'call_5',
      fn: bound.book_table!,
      arguments: [1],
    });
    expect(badArguments).toMatchObject({ status: 'invalid_arguments' });
    expect(endpoint.received.filter((received) => received.path === '/slow')).toHaveLength(1);

    const view = await api.request('GET', `/calls/${call.id}`, { key: owner.key });
    expect(view.status).toBe(200);
    const { functionCalls } = (await view.json()) as { functionCalls: Array<Record<string, unknown>> };
    expect(functionCalls.map(({ name, status, httpStatus }) => [name, status, httpStatus])).toEqual([
      ['book_table', 'ok', 200],
      ['slow_booking', 'timed_out', null],
      ['failing_booking', 'http_error', 500],
      ['private_booking', 'refused', null],
    ]);
    expect(functionCalls[0]).toMatchObject({
      toolCallId: 'call_1',
      idempotencyKey: idempotencyKeyOf(call.id, 'call_1'),
      arguments: { people: 4, customer: 'spoofed by the model' },
      resultBytes: expect.any(Number),
      durationMs: expect.any(Number),
    });
  });

  it('signs with the old and the new secret during a rotation, so either verifies', async () => {
    const owner = await createTestWorkspace(db);
    const agent = await insertAgent(db, owner.workspaceId);
    const { id, signingSecret: old } = await createFunction(
      db,
      TEST_KEYRING,
      owner.workspaceId,
      definition({ url: `${endpoint.base}/book?rotation` }),
    );
    await bindFunction(db, owner.workspaceId, id, agent.id);
    const rotated = await adminJson(['function', 'secret', 'rotate', '--workspace', owner.workspaceId]);
    expect(Date.parse(rotated.previousRetireAt) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    const call = await insertAnsweredCall(db, owner, { agentId: agent.id });
    const [fn] = await functionsOfCall(deps.sql, call.id);
    expect(
      await invokeFunction(deps, { callId: call.id, toolCallId: 't', fn: fn!, arguments: { people: 2 } }),
    ).toMatchObject({ ok: true });
    const request = endpoint.received.find((received) => received.path === '/book?rotation')!;
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyFunctionRequest(old!, request.headers, request.body)).toBe(true);
    expect(verifyFunctionRequest(rotated.secret, request.headers, request.body)).toBe(true);
    // Past the grace period the old secret signs no more.
    await db.functionSigningSecret.updateMany({
      where: { workspaceId: owner.workspaceId, retiresAt: { not: null } },
      data: { retiresAt: new Date(Date.now() - 1000) },
    });
    await invokeFunction(deps, { callId: call.id, toolCallId: 'u', fn: fn!, arguments: { people: 2 } });
    const later = endpoint.received.filter((received) => received.path === '/book?rotation')[1]!;
    expect(verifyFunctionRequest(old!, later.headers, later.body)).toBe(false);
    expect(verifyFunctionRequest(rotated.secret, later.headers, later.body)).toBe(true);
  });
});

describe('custom functions in a conversation with the model', () => {
  /** An agent with the functions bound, a call of it, and a model engine over the twin whose tools are the call's. */
  async function conversation(definitions: FunctionDefinition[]) {
    const owner = await createTestWorkspace(db);
    const agent = await insertAgent(db, owner.workspaceId);
    let secret: string | undefined;
    for (const fn of definitions) {
      const made = await createFunction(db, TEST_KEYRING, owner.workspaceId, fn);
      secret ??= made.signingSecret;
      await bindFunction(db, owner.workspaceId, made.id, agent.id);
    }
    const call = await insertAnsweredCall(db, owner, { agentId: agent.id });
    const context = recordingContext();
    context.tools = { ...context.tools, functions: createCallFunctions(deps, call.id) };
    twin.reset();
    const engine = createModelEngine(context, {
      baseURL,
      apiKey: OPENAI_TWIN_API_KEY,
      model: 'gpt-twin',
      timeoutMs: 5_000,
      slowLineAfterMs: 50,
    });
    return { call, context, engine, secret: secret! };
  }
  type Message = { role: string; content?: unknown; tool_calls?: Array<{ id: string }>; tool_call_id?: string };
  const messagesOf = (index: number) => twin.requests[index]!.body.messages as Message[];

  it("offers the agent's functions beside the four, says the filler line, sends the model's call signed and feeds its answer back", async () => {
    const { call, context, engine, secret } = await conversation([
      definition({ url: `${endpoint.base}/book?conversation`, fillerLine: 'One moment, I am booking that.' }),
    ]);
    twin.script(
      { toolCalls: [{ name: 'book_table', arguments: '{"people":4}' }] },
      { content: 'Your table is booked.' },
    );
    expect((await collect(engine.onPrompt('A table for four, please'))).join('')).toBe(
      'One moment, I am booking that. Your table is booked.',
    );
    const offered = twin.requests[0]!.body.tools as Array<{ function: { name: string; parameters: unknown } }>;
    expect(offered.map((tool) => tool.function.name)).toEqual([
      'end_call',
      'transfer_to_human',
      'schedule_callback',
      'opt_out',
      'book_table',
    ]);
    // The model sees the schema of its own arguments; the presets are nowhere in what it is sent.
    expect(offered[4]!.function.parameters).toEqual(definition().parameters);
    expect(JSON.stringify(twin.requests[0]!.body)).not.toContain('lead.fields.customerId');
    const toolCallId = messagesOf(1).find((message) => message.tool_calls)!.tool_calls![0]!.id;
    expect(messagesOf(1).at(-1)).toEqual({
      role: 'tool',
      tool_call_id: toolCallId,
      content: 'Booked table 12 for 4 people.',
    });
    const request = endpoint.received.find((received) => received.path === '/book?conversation')!;
    expect(verifyFunctionRequest(secret, request.headers, request.body)).toBe(true);
    expect(request.headers['idempotency-key']).toBe(idempotencyKeyOf(call.id, toolCallId));
    expect(JSON.parse(request.body)).toMatchObject({ toolCallId, arguments: { people: 4 } });
    expect(context.turns.filter((turn) => turn.step === 1).map((turn) => [turn.part, turn.speaker, turn.text])).toEqual(
      [
        [0, 'lead', 'A table for four, please'],
        [1, 'agent', 'One moment, I am booking that.'],
        [2, 'tool', 'book_table'],
        [3, 'agent', 'Your table is booked.'],
      ],
    );
    expect(await db.functionInvocation.count({ where: { callId: call.id, status: 'ok' } })).toBe(1);
  });

  it('says the slow line while the function runs, and tells the model the outcome is unknown when it times out', async () => {
    const { call, context, engine } = await conversation([
      definition({
        name: 'slow_booking',
        url: `${endpoint.base}/slow`,
        timeoutMs: 1_000,
        slowLine: 'Still working on it.',
      }),
    ]);
    twin.script(
      { toolCalls: [{ name: 'slow_booking', arguments: '{"people":2}' }] },
      { content: 'I could not confirm it.' },
    );
    expect((await collect(engine.onPrompt('Book it'))).join('')).toBe('Still working on it. I could not confirm it.');
    expect(String(messagesOf(1).at(-1)!.content)).toMatch(/^Outcome unknown: slow_booking did not answer within 1 s/);
    expect(context.turns.filter((turn) => turn.step === 1).map((turn) => turn.speaker)).toEqual([
      'lead',
      'agent',
      'tool',
      'agent',
    ]);
    expect(await db.functionInvocation.findMany({ where: { callId: call.id }, select: { status: true } })).toEqual([
      { status: 'timed_out' },
    ]);
  });
});

describe('custom functions in a script', () => {
  const script = { openingLine: 'Hi {{name}}!', questions: ['How many people?', 'Which day?'], closing: 'Bye.' };

  it('calls the function bound to a question once it is answered, says its answer, and never sends that step twice', async () => {
    const owner = await createTestWorkspace(db);
    const agent = await insertAgent(db, owner.workspaceId, { script });
    const fn = await createFunction(
      db,
      TEST_KEYRING,
      owner.workspaceId,
      definition({ url: `${endpoint.base}/book?script`, fillerLine: 'Let me check.' }),
    );
    await expect(bindFunction(db, owner.workspaceId, fn.id, agent.id, 3)).rejects.toThrow(/no question 3/);
    await bindFunction(db, owner.workspaceId, fn.id, agent.id, 1);
    const call = await insertAnsweredCall(db, owner, { agentId: agent.id });
    const engineOfCall = () => {
      const context = recordingContext({ call: agentCall({ script }) });
      context.tools = { ...context.tools, functions: createCallFunctions(deps, call.id) };
      return { context, engine: createScriptEngine(context) };
    };

    const { context, engine } = engineOfCall();
    expect(await engine.start()).toBe('How many people?');
    expect((await collect(engine.onPrompt('Four of us'))).join('')).toBe(
      'Let me check. Booked table 12 for 4 people. Which day?',
    );
    const sent = endpoint.received.filter((received) => received.path === '/book?script');
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0]!.body)).toMatchObject({
      toolCallId: 'script-question-1',
      arguments: { answer: 'Four of us' },
      presets: { call: `call ${call.id}` },
    });
    expect(context.turns.filter((turn) => turn.step === 1).map((turn) => [turn.part, turn.speaker, turn.text])).toEqual(
      [
        [0, 'lead', 'Four of us'],
        [1, 'agent', 'Let me check.'],
        [2, 'tool', 'book_table'],
        [3, 'agent', 'Booked table 12 for 4 people.'],
        [4, 'agent', 'Which day?'],
      ],
    );

    // The conversation taken up again from its start (a process that stopped): the step's request is not sent again.
    const resumed = engineOfCall();
    await resumed.engine.start();
    expect((await collect(resumed.engine.onPrompt('Four of us'))).join('')).toBe('Let me check. Which day?');
    expect(endpoint.received.filter((received) => received.path === '/book?script')).toHaveLength(1);
    expect(resumed.context.turns.find((turn) => turn.speaker === 'tool')).toMatchObject({
      tool: { ok: false, result: expect.stringMatching(/already called/) },
    });
  });
});

/** A JSON Schema nested `levels` deep. */
function deep(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let level = 1; level < levels; level++) schema = { type: 'object', properties: { inner: schema } };
  return schema;
}
