// The OpenAI twin (simulators/openai-twin/, docs/features/conversation/model-engine.md#the-openai-twin): its answers and the SDK's
// requests held to OpenAI's published description (vendor/openapi/openai/), its errors, its rules and its controls.
import { beforeEach, describe, expect, it } from 'vitest';
import { createModelIntelligence } from '../../lib/call-intelligence/model-intelligence';
import { createModelEngine } from '../../lib/conversation/model-engine';
import { TWIN_REPLIES, twinReply, type TwinMessage } from '../../simulators/openai-twin/model';
import { structuredAnswer } from '../../simulators/openai-twin/structured';
import { carrierDescription, expectValidDescription } from '../support/carrier-openapi';
import { OPENAI_TWIN_API_KEY, collect, recordingContext, startOpenAiTwin } from '../support/openai-twin';

const openai = carrierDescription('openai');
const CREATE = { method: 'post', path: '/chat/completions' };
const { twin, baseURL } = await startOpenAiTwin();

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'schedule_callback',
      description: 'Book a call back.',
      parameters: { type: 'object', properties: { when: { type: 'string' } }, required: ['when'] },
    },
  },
];

async function post(body: unknown, key: string | null = OPENAI_TWIN_API_KEY) {
  const response = await fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text: await response.text(),
  };
}

/** The `data:` lines of an event stream: each parsed, and the last `[DONE]` kept as text. */
const eventsOf = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice('data: '.length))
    .map((data) => (data === '[DONE]' ? data : (JSON.parse(data) as Record<string, any>)));

const errorProblems = (body: unknown) => openai.schemaProblems('/components/schemas/ErrorResponse', body);

beforeEach(() => twin.reset());

describe("OpenAI's vendored description", () => {
  it('is the published OpenAPI 3.1 description, valid, with its provenance and the chat completions operation', async () => {
    await expectValidDescription(
      openai,
      { openapi: '3.1.0', repository: 'openai/openai-openapi', path: 'openapi.json' },
      (document) => {
        document.paths['/chat/completions'].post.responses = 'none';
      },
    );
    expect(Object.keys(openai.document.paths as object)).toEqual(['/chat/completions']);
    expect(openai.danglingRefs()).toEqual([]);
    expect(openai.unknownFormats()).toEqual([]);
  });
});

describe('the twin against the description', () => {
  it('streams chat.completion.chunk events word by word, tool call deltas across chunks, usage, then [DONE]', async () => {
    const body = {
      model: 'gpt-twin',
      stream: true,
      stream_options: { include_usage: true },
      tools: TOOLS,
      messages: [
        { role: 'system', content: 'You sell solar panels.' },
        { role: 'user', content: 'Call me back tomorrow at 3 pm' },
      ],
    };
    expect(openai.requestProblems(CREATE, { contentType: 'application/json', body })).toEqual([]);
    const response = await post(body);
    expect(response.status).toBe(200);
    expect(response.contentType).toMatch(/^text\/event-stream/);
    const events = eventsOf(response.text);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1) as Array<Record<string, any>>;
    for (const chunk of chunks)
      expect(
        openai.responseProblems(CREATE, { status: 200, contentType: 'text/event-stream', body: chunk }),
        JSON.stringify(chunk),
      ).toEqual([]);
    const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice: any) => choice.delta));
    const toolDeltas = deltas.flatMap((delta) => delta.tool_calls ?? []);
    expect(toolDeltas[0]).toMatchObject({ index: 0, id: expect.stringMatching(/^call_/), type: 'function' });
    expect(toolDeltas[0].function).toEqual({ name: 'schedule_callback', arguments: '' });
    const fragments = toolDeltas.slice(1).map((delta) => delta.function.arguments as string);
    expect(fragments.length).toBeGreaterThan(1);
    expect(JSON.parse(fragments.join(''))).toEqual({ when: 'Call me back tomorrow at 3 pm' });
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('tool_calls');
    // The usage chunk comes last, with no choices; the others carry usage null.
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: expect.any(Number) } });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
  });

  it('streams words one by one and ends with stop; the checker refuses a chunk that is not one', async () => {
    const response = await post({
      model: 'gpt-twin',
      stream: true,
      messages: [{ role: 'user', content: 'Tell me more' }],
    });
    const chunks = eventsOf(response.text).slice(0, -1) as Array<Record<string, any>>;
    const words = chunks.map((chunk) => chunk.choices[0].delta.content).filter(Boolean);
    expect(words.join('')).toBe(TWIN_REPLIES.acknowledgement);
    expect(words).toEqual(TWIN_REPLIES.acknowledgement.split(/(?<=\s)/));
    expect(chunks.at(-1)!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunks.some((chunk) => 'usage' in chunk)).toBe(false);
    const wrong = { ...chunks[1], object: 'chat.completion', choices: [{ index: 0, delta: { content: 7 } }] };
    expect(
      openai.responseProblems(CREATE, { status: 200, contentType: 'text/event-stream', body: wrong }).length,
    ).toBeGreaterThan(0);
  });

  it('answers a chat.completion when not streaming, with tool calls when the model calls one', async () => {
    for (const [content, finish] of [
      ['Hello', 'stop'],
      ['Please call me back later', 'tool_calls'],
    ] as const) {
      const response = await post({ model: 'gpt-twin', tools: TOOLS, messages: [{ role: 'user', content }] });
      expect(response.status).toBe(200);
      const body = JSON.parse(response.text) as Record<string, any>;
      expect(openai.responseProblems(CREATE, { status: 200, contentType: response.contentType, body })).toEqual([]);
      expect(body).toMatchObject({ object: 'chat.completion', choices: [{ finish_reason: finish }] });
      if (finish === 'tool_calls')
        expect(body.choices[0].message.tool_calls[0].function).toEqual({
          name: 'schedule_callback',
          arguments: JSON.stringify({ when: content }),
        });
    }
  });

  it("holds the SDK's requests to the description: the model engine's streamed, tool and opening requests", async () => {
    const context = recordingContext({
      knowledge: () => [{ documentId: 'doc_1', title: 'Prices', text: 'The basic plan is 20 dollars.' }],
    });
    const engine = createModelEngine(context, {
      baseURL,
      apiKey: OPENAI_TWIN_API_KEY,
      model: 'gpt-twin',
      timeoutMs: 5_000,
    });
    await engine.start();
    await collect(engine.onPrompt('How much is it?'));
    await engine.onInterrupt('Here is what');
    await collect(engine.onPrompt('Call me back tomorrow at 3 pm'));
    expect(twin.requests.length).toBe(4);
    for (const request of twin.requests)
      expect(openai.requestProblems(CREATE, { contentType: 'application/json', body: request.body })).toEqual([]);
    // The checker can fail: a tool_choice the description does not allow.
    expect(
      openai.requestProblems(CREATE, {
        contentType: 'application/json',
        body: { ...twin.requests[1]!.body, tool_choice: 'sometimes' },
      }).length,
    ).toBeGreaterThan(0);
  });
});

describe("the twin's errors, in OpenAI's shape", () => {
  it('401 for a wrong or missing key, never repeating the key', async () => {
    const wrong = await post({ model: 'gpt-twin', messages: [{ role: 'user', content: 'Hi' }] }, 'sk-not-this-one-42');
    expect(wrong.status).toBe(401);
    const body = JSON.parse(wrong.text) as unknown;
    expect(errorProblems(body)).toEqual([]);
    expect(body).toEqual({
      error: {
        message: 'Incorrect API key provided.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    });
    expect(wrong.text).not.toContain('sk-not-this-one-42');
    const missing = await post({ model: 'gpt-twin', messages: [{ role: 'user', content: 'Hi' }] }, null);
    expect(missing.status).toBe(401);
    expect(errorProblems(JSON.parse(missing.text))).toEqual([]);
    expect(twin.requests).toHaveLength(0);
    // The checker can fail: an error without its members.
    expect(errorProblems({ error: { message: 'x' } }).length).toBeGreaterThan(0);
  });

  it.each([
    { name: 'not JSON', body: '{"model": ', param: null },
    { name: 'no model', body: { messages: [{ role: 'user', content: 'Hi' }] }, param: 'model' },
    { name: 'no messages', body: { model: 'm', messages: [] }, param: 'messages' },
    {
      name: 'an unknown role',
      body: { model: 'm', messages: [{ role: 'robot', content: 'Hi' }] },
      param: 'messages[0].role',
    },
    {
      name: 'a tool message answering no call',
      body: { model: 'm', messages: [{ role: 'tool', tool_call_id: 'call_1', content: 'done' }] },
      param: 'messages[0].tool_call_id',
    },
    {
      name: 'stream_options without stream',
      body: { model: 'm', stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi' }] },
      param: 'stream_options',
    },
    {
      name: 'a tool without a valid name',
      body: {
        model: 'm',
        tools: [{ type: 'function', function: { name: 'no spaces' } }],
        messages: [{ role: 'user', content: 'Hi' }],
      },
      param: 'tools[0].function.name',
    },
  ])('400 for $name', async ({ body, param }) => {
    const response = await post(body);
    expect(response.status).toBe(400);
    const parsed = JSON.parse(response.text) as { error: { param: unknown; type: string } };
    expect(errorProblems(parsed)).toEqual([]);
    expect(parsed.error).toMatchObject({ type: 'invalid_request_error', param });
  });

  it('a scripted failure answers its status in the same shape', async () => {
    twin.script({ status: 503 });
    const response = await post({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] });
    expect(response.status).toBe(503);
    expect(errorProblems(JSON.parse(response.text))).toEqual([]);
  });
});

describe("the twin's model", () => {
  const offered = new Set(['end_call', 'transfer_to_human', 'schedule_callback', 'opt_out']);
  const user = (content: string): TwinMessage[] => [{ role: 'user', content }];
  const toolOf = (content: string, tools = offered) => twinReply(user(content), tools).toolCalls[0]?.name ?? null;

  it('calls a tool by the first rule that matches the last words of the lead', () => {
    expect(toolOf("Don't call me tomorrow, stop calling me")).toBe('opt_out');
    expect(toolOf('Can I speak to a real person tomorrow?')).toBe('transfer_to_human');
    expect(toolOf('Call me back later')).toBe('schedule_callback');
    expect(toolOf('Ok, goodbye')).toBe('end_call');
    expect(toolOf('What does it cost?')).toBeNull();
    // A tool not offered (or tool_choice none) is never called: words instead.
    expect(toolOf('Stop calling me', new Set())).toBeNull();
    expect(twinReply(user('bye'), new Set()).content).toBe(TWIN_REPLIES.goodbye);
  });

  it('confirms after a tool result, and quotes the first passage of the system message', () => {
    const afterTool = (name: string, args: string, result: string): TwinMessage[] => [
      { role: 'user', content: 'x' },
      { role: 'assistant', tool_calls: [{ id: 'call_1', function: { name, arguments: args } }] },
      { role: 'tool', tool_call_id: 'call_1', content: result },
    ];
    expect(twinReply(afterTool('schedule_callback', '{"when":"at noon"}', 'ok'), offered).content).toBe(
      TWIN_REPLIES.scheduled('at noon'),
    );
    expect(twinReply(afterTool('opt_out', '{}', 'ok'), offered).content).toBe(TWIN_REPLIES.optedOut);
    expect(twinReply(afterTool('opt_out', '{}', 'Error: refused'), offered).content).toBe(TWIN_REPLIES.failed);
    expect(twinReply(afterTool('end_call', '{}', 'ok'), offered)).toEqual({ content: '', toolCalls: [] });
    const withKnowledge: TwinMessage[] = [
      {
        role: 'system',
        content: 'Rules.\n<passage title="A">First fact.</passage>\n<passage title="B">Second.</passage>',
      },
      { role: 'user', content: 'Tell me' },
    ];
    expect(twinReply(withKnowledge, offered).content).toBe(TWIN_REPLIES.knowledge('First fact.'));
    expect(twinReply([{ role: 'system', content: 'Rules.' }], offered).content).toBe(TWIN_REPLIES.opening);
  });
});

describe("the twin's test controls", () => {
  it('scripts the next replies, holds and releases them, sets the first-token delay and lists the requests', async () => {
    const control = (path: string, body?: unknown) =>
      fetch(`${baseURL.replace(/\/v1$/, '')}/control/${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, any> }));
    expect((await control('replies', [{ content: 'Scripted words here', holdAfterWords: 1 }])).body).toEqual({
      queued: 1,
    });
    expect((await control('replies', [{ content: 7 }])).status).toBe(400);
    expect((await control('latency', { firstTokenMs: 0 })).body).toEqual({ firstTokenMs: 0 });
    const answer = post({ model: 'm', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    // The answer is held after its first word until released.
    for (let tries = 0; twin.held === 0; tries++) {
      expect(tries).toBeLessThan(500);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect((await control('release', {})).body).toEqual({ released: 1 });
    const words = eventsOf((await answer).text)
      .slice(0, -1)
      .map((chunk) => (chunk as Record<string, any>).choices[0].delta.content)
      .filter(Boolean);
    expect(words).toEqual(['Scripted ', 'words ', 'here']);
    const listed = (await control('requests')).body.requests as Array<{ body: unknown; cutOff: boolean }>;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ body: { model: 'm' }, cutOff: false });
  });
});

describe('structured outputs (response_format json_schema)', () => {
  const FIELDS = [
    { name: 'seats', type: 'number' },
    { name: 'plan', type: 'enum', allowedValues: ['starter', 'growth'] },
    { name: 'start_date', type: 'date' },
  ];
  const TRANSCRIPT = [
    { speaker: 'agent' as const, text: 'Hi, this is Ana.', offsetMs: 0 },
    { speaker: 'lead' as const, text: 'Hello.', offsetMs: 2_000 },
    { speaker: 'agent' as const, text: 'How many seats do you need?', offsetMs: 4_000 },
    { speaker: 'lead' as const, text: 'About 1,200.', offsetMs: 6_000 },
    { speaker: 'agent' as const, text: 'Which plan suits you?', offsetMs: 8_000 },
    { speaker: 'lead' as const, text: 'The growth one.', offsetMs: 10_000 },
    { speaker: 'agent' as const, text: 'When can we start?', offsetMs: 12_000 },
    { speaker: 'lead' as const, text: 'March 5, 2026.', offsetMs: 14_000 },
  ];
  const analyse = () =>
    createModelIntelligence({
      name: 'openai-twin',
      baseURL,
      apiKey: OPENAI_TWIN_API_KEY,
      model: 'gpt-twin',
      timeoutMs: 5_000,
    }).analyse({
      fields: FIELDS,
      transcript: TRANSCRIPT,
      language: 'en-US',
      script: null,
      answeredBy: 'human',
      durationMs: 20_000,
    });

  it("holds call intelligence's request and the twin's answer to the description, streamed or not", async () => {
    const analysis = await analyse();
    expect(analysis.extraction).toEqual({
      seats: { value: 1200, confidence: 0.9, evidence: 'About 1,200.' },
      plan: { value: 'growth', confidence: 0.9, evidence: 'The growth one.' },
      start_date: { value: '2026-03-05', confidence: 0.9, evidence: 'March 5, 2026.' },
    });
    expect(analysis.evaluation.score).toBe(100);
    const sent = twin.requests[0]!.body;
    expect(openai.requestProblems(CREATE, { contentType: 'application/json', body: sent })).toEqual([]);
    // The checker can fail: a json_schema format without its json_schema.
    expect(
      openai.requestProblems(CREATE, {
        contentType: 'application/json',
        body: { ...sent, response_format: { type: 'json_schema' } },
      }).length,
    ).toBeGreaterThan(0);

    const whole = await post(sent);
    const completion = JSON.parse(whole.text) as Record<string, any>;
    expect(openai.responseProblems(CREATE, { status: 200, contentType: whole.contentType, body: completion })).toEqual(
      [],
    );
    expect(completion.choices[0]).toMatchObject({ finish_reason: 'stop', message: { refusal: null } });
    const streamed = await post({ ...sent, stream: true });
    const chunks = eventsOf(streamed.text).slice(0, -1) as Array<Record<string, any>>;
    for (const chunk of chunks)
      expect(openai.responseProblems(CREATE, { status: 200, contentType: 'text/event-stream', body: chunk })).toEqual(
        [],
      );
    const content = chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join('');
    expect(JSON.parse(content)).toEqual(JSON.parse(completion.choices[0].message.content));
  });

  it("refuses a schema strict mode refuses, and a format it does not answer, in OpenAI's error shape", async () => {
    const messages = [{ role: 'user', content: 'lead: hi' }];
    const schema = {
      type: 'object',
      properties: { a: { type: 'object', properties: { b: { type: 'string' } }, required: ['b'] } },
      required: ['a'],
      additionalProperties: false,
    };
    const format = (json_schema: unknown) => ({
      model: 'm',
      messages,
      response_format: { type: 'json_schema', json_schema },
    });
    const open = await post(format({ name: 'x', strict: true, schema }));
    expect(open.status).toBe(400);
    expect(errorProblems(JSON.parse(open.text))).toEqual([]);
    expect(JSON.parse(open.text).error).toMatchObject({
      param: 'response_format',
      message: expect.stringContaining("In context=('properties', 'a'), 'additionalProperties' is required"),
    });
    const closed = {
      ...schema,
      properties: { a: { ...schema.properties.a, additionalProperties: false, required: [] } },
    };
    const missing = await post(format({ name: 'x', strict: true, schema: closed }));
    expect(JSON.parse(missing.text).error.message).toContain("Missing 'b'");
    // Not strict: taken as it is.
    expect((await post(format({ name: 'x', schema }))).status).toBe(200);
    expect((await post(format({ name: 'no spaces', strict: true, schema }))).status).toBe(400);
    const jsonObject = await post({ model: 'm', messages, response_format: { type: 'json_object' } });
    expect(jsonObject.status).toBe(400);
    expect(JSON.parse(jsonObject.text).error.param).toBe('response_format.type');
  });

  it('answers broken on purpose when a test asks: cut short (finish_reason length) or off the schema', async () => {
    await analyse();
    const sent = twin.requests[0]!.body;
    const control = (replies: unknown) =>
      fetch(`${baseURL.replace(/\/v1$/, '')}/control/replies`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(replies),
      });
    expect((await control([{ malformed: 'truncated' }, { malformed: 'off_schema' }])).status).toBe(200);
    expect((await control([{ malformed: 'invalid' }])).status).toBe(400);
    const cut = JSON.parse((await post(sent)).text) as Record<string, any>;
    expect(cut.choices[0].finish_reason).toBe('length');
    expect(() => JSON.parse(cut.choices[0].message.content as string)).toThrow();
    const off = JSON.parse((await post(sent)).text) as Record<string, any>;
    expect(off.choices[0].finish_reason).toBe('stop');
    expect(JSON.parse(off.choices[0].message.content as string).extraction.seats.value).toBe('1200');
    await expect(analyse()).resolves.toMatchObject({ extraction: { seats: { value: 1200 } } });
  });

  it('fills any schema by its own rules, from the `speaker: words` lines of the last user message', () => {
    const schema = {
      type: 'object',
      properties: {
        owner: {
          type: 'object',
          properties: {
            value: { type: ['boolean', 'null'] },
            confidence: { type: 'number' },
            evidence: { type: 'string' },
          },
        },
        budget: { type: 'object', properties: { value: { anyOf: [{ type: 'integer' }, { type: 'null' }] } } },
        company: { type: 'object', properties: { value: { type: 'string' } } },
        rating: {
          type: 'object',
          properties: { points: { type: 'integer', minimum: 1, maximum: 7 }, why: { type: 'string' } },
        },
        tags: { type: 'array', items: { type: 'string' } },
        mood: { type: 'string', enum: ['calm', 'angry'] },
      },
    };
    const messages = (user: string): TwinMessage[] => [
      { role: 'system', content: 'agent: not a transcript line of the user message' },
      { role: 'user', content: user },
    ];
    const transcript = [
      '[0:00] agent: Hello!',
      '[0:02] lead: Hi.',
      '[0:04] agent: Are you the owner of the account?',
      '[0:06] lead (heard with confidence 0.8): No, my wife is.',
      '[0:08] agent: What is your budget?',
      '[0:09] tool: transfer_to_human {} -> ok: Transferring.',
      '[0:10] lead: I am not sure.',
    ].join('\n');
    expect(structuredAnswer(schema, messages(transcript))).toEqual({
      owner: { value: false, confidence: 0.9, evidence: 'No, my wife is.' },
      // A tool line ends the agent's question: nobody answered it.
      budget: { value: null },
      // Not nullable, and no question asks for it: a value all the same.
      company: { value: "The OpenAI twin's value of company." },
      rating: { points: 7, why: "The OpenAI twin's why of rating." },
      tags: [],
      mood: 'calm',
    });
    // No words of the lead: nothing read, the smallest points.
    expect(structuredAnswer(schema, messages('agent: Hello?'))).toMatchObject({
      owner: { value: null, confidence: 0, evidence: null },
      rating: { points: 1 },
    });
  });
});
