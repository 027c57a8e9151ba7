// The OpenAI twin (simulators/openai-twin/, docs/features/model-engine.md#the-openai-twin): its answers and the SDK's
// requests held to OpenAI's published description (vendor/openapi/openai/), its errors, its rules and its controls.
import { beforeEach, describe, expect, it } from 'vitest';
import { createModelEngine } from '../../lib/dialogue/model-engine';
import { TWIN_REPLIES, twinReply, type TwinMessage } from '../../simulators/openai-twin/model';
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
