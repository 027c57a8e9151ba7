import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import { closeHttp, listenHttp } from '../../lib/http/listen';
import { fragmentsOf, textOf, twinReply, wordsOf, type TwinMessage, type TwinReply, type TwinToolCall } from './model';
import { offSchema, strictSchemaProblem, structuredAnswer } from './structured';

/**
 * The OpenAI twin (docs/features/conversation/model-engine.md#the-openai-twin): a local server that speaks OpenAI's chat completions
 * (`POST /v1/chat/completions`, `Authorization: Bearer <key>`, OpenAI's error bodies, server-sent `chat.completion.chunk`
 * events ending `data: [DONE]`, or one `chat.completion`), so that the official `openai` package talks to it with only
 * its baseURL and API key changed. Its model is model.ts's rules. TEST CONTROL routes (not OpenAI's) under /control.
 */
export interface OpenAiTwinOptions {
  /** The keys it accepts as `Authorization: Bearer <key>`. */
  apiKeys: readonly string[];
  /** Milliseconds before the first chunk (or the whole answer) of every completion; 0: none. */
  firstTokenMs?: number;
  /** Milliseconds between streamed chunks; 0: none. */
  chunkMs?: number;
}

/** A reply a test scripts for the next request (POST /control/replies), instead of the rules'. */
export const scriptedReplySchema = z.object({
  content: z.string().default(''),
  toolCalls: z.array(z.object({ name: z.string(), arguments: z.string() })).default([]),
  /** Stream this many words of the content, then hold the rest until POST /control/release. */
  holdAfterWords: z.number().int().min(0).optional(),
  /** Answer this HTTP status with OpenAI's error body instead. */
  status: z.number().int().min(400).max(599).optional(),
  /** Never answer: the client gives up (its timeout) or the twin stops. */
  hang: z.boolean().default(false),
  /** This reply's first-token delay, in place of the twin's. */
  firstTokenMs: z.number().int().min(0).optional(),
  /**
   * A structured-output request (response_format json_schema) only: the rules' answer broken on purpose. truncated: cut
   * in the middle, with finish_reason length (a model that ran out of tokens); off_schema: valid JSON that breaks the
   * schema (its first number written as a string).
   */
  malformed: z.enum(['truncated', 'off_schema']).optional(),
});
export type ScriptedReply = z.infer<typeof scriptedReplySchema>;

/** A request the twin received: its body (never its key), and whether its client hung up before the answer ended. */
export interface ReceivedCompletion {
  body: Record<string, unknown>;
  /** Set when the connection closed before the twin finished its answer (the client aborted). */
  cutOff: boolean;
}

export interface OpenAiTwin {
  /** Answers the base URL to give the SDK (`http://host:port/v1`). */
  listen(port: number, host?: string): Promise<string>;
  close(): Promise<void>;
  /** The requests received, oldest first (GET /control/requests). */
  readonly requests: readonly ReceivedCompletion[];
  /** Queues replies for the next requests (POST /control/replies). */
  script(...replies: Array<Partial<ScriptedReply>>): void;
  /** Lets every held answer go on (POST /control/release); answers how many were held. */
  release(): number;
  /** How many answers are held now. */
  readonly held: number;
  /** Sets the first-token delay of later requests (POST /control/latency). */
  setFirstTokenMs(ms: number): void;
  /** Releases what is held and forgets the requests and the queued replies (DELETE /control/requests). */
  reset(): void;
}

/** OpenAI's error body (components.schemas.ErrorResponse of the vendored description). */
class OpenAiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
  get body() {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

const invalid = (message: string, param: string | null = null, code: string | null = null) =>
  new OpenAiError(400, message, 'invalid_request_error', param, code);

const SCHEMA_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The structured output a request asks for (response_format json_schema), or null for text; OpenAI's 400 for a bad one. */
function responseFormatOf(format: unknown): { name: string; schema: unknown } | null {
  if (format == null) return null;
  if (!isObject(format)) throw invalid("Invalid type for 'response_format': expected an object.", 'response_format');
  if (format.type === 'text') return null;
  if (format.type === 'json_object')
    throw invalid('The twin answers json_schema response formats only, not json_object.', 'response_format.type');
  if (format.type !== 'json_schema')
    throw invalid(
      `Invalid value: '${String(format.type)}'. Supported values are: 'text', 'json_object' and 'json_schema'.`,
      'response_format.type',
    );
  const spec = format.json_schema;
  if (!isObject(spec))
    throw invalid("Missing required parameter: 'response_format.json_schema'.", 'response_format.json_schema');
  if (typeof spec.name !== 'string' || !SCHEMA_NAME.test(spec.name))
    throw invalid("Invalid 'response_format.json_schema.name'.", 'response_format.json_schema.name');
  if (spec.schema !== undefined && !isObject(spec.schema))
    throw invalid("Invalid type for 'response_format.json_schema.schema'.", 'response_format.json_schema.schema');
  if (spec.strict === true) {
    const problem = strictSchemaProblem(spec.schema);
    if (problem) throw invalid(`Invalid schema for response_format '${spec.name}': ${problem}`, 'response_format');
  }
  return { name: spec.name, schema: spec.schema ?? { type: 'object', properties: {} } };
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
const sleep = (ms: number) => (ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve());

type Body = Record<string, unknown>;
const isObject = (value: unknown): value is Body => !!value && typeof value === 'object' && !Array.isArray(value);

/** The request body as the twin accepts it, or OpenAI's 400 naming the first fault. */
function checkedBody(body: unknown): {
  model: string;
  messages: TwinMessage[];
  offered: Set<string>;
  structured: { name: string; schema: unknown } | null;
  body: Body;
} {
  if (!isObject(body)) throw invalid('We could not parse the JSON body of your request.');
  if (typeof body.model !== 'string' || !body.model) throw invalid("Missing required parameter: 'model'.", 'model');
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw invalid("Invalid 'messages': empty array. Expected an array with minimum length 1.", 'messages');
  const callIds = new Set<string>();
  body.messages.forEach((message: unknown, index) => {
    const at = `messages[${index}]`;
    if (!isObject(message) || typeof message.role !== 'string' || !ROLES.has(message.role))
      throw invalid(`Invalid value for '${at}.role'.`, `${at}.role`);
    const content = message.content;
    const hasContent = typeof content === 'string' || Array.isArray(content);
    if (message.role === 'assistant') {
      if (message.tool_calls !== undefined) {
        if (!Array.isArray(message.tool_calls))
          throw invalid(`Invalid type for '${at}.tool_calls'.`, `${at}.tool_calls`);
        for (const toolCall of message.tool_calls as unknown[]) {
          if (
            !isObject(toolCall) ||
            typeof toolCall.id !== 'string' ||
            toolCall.type !== 'function' ||
            !isObject(toolCall.function) ||
            typeof toolCall.function.name !== 'string' ||
            typeof toolCall.function.arguments !== 'string'
          )
            throw invalid(`Invalid value for '${at}.tool_calls'.`, `${at}.tool_calls`);
          callIds.add(toolCall.id);
        }
      } else if (!hasContent) throw invalid(`Missing required parameter: '${at}.content'.`, `${at}.content`);
    } else if (!hasContent) throw invalid(`Missing required parameter: '${at}.content'.`, `${at}.content`);
    if (message.role === 'tool' && (typeof message.tool_call_id !== 'string' || !callIds.has(message.tool_call_id)))
      throw invalid(
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        `${at}.tool_call_id`,
      );
  });
  const offered = new Set<string>();
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) throw invalid("Invalid type for 'tools': expected an array.", 'tools');
    body.tools.forEach((tool: unknown, index) => {
      if (!isObject(tool) || tool.type !== 'function' || !isObject(tool.function))
        throw invalid(`Invalid value for 'tools[${index}]'.`, `tools[${index}]`);
      const name = tool.function.name;
      if (typeof name !== 'string' || !TOOL_NAME.test(name))
        throw invalid(`Invalid 'tools[${index}].function.name'.`, `tools[${index}].function.name`);
      offered.add(name);
    });
  }
  if (body.tool_choice != null) {
    if (body.tools === undefined)
      throw invalid(
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
        'tool_choice',
      );
    // 'none': the model answers with words only.
    if (body.tool_choice === 'none') offered.clear();
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
    throw invalid("Invalid type for 'stream': expected a boolean.", 'stream');
  if (body.stream_options != null && body.stream !== true)
    throw invalid('The stream_options parameter is only allowed when stream is enabled.', 'stream_options');
  if (body.n != null && body.n !== 1) throw invalid('The twin answers one choice only (n = 1).', 'n');
  const structured = responseFormatOf(body.response_format);
  return { model: body.model, messages: body.messages as TwinMessage[], offered, structured, body };
}

/**
 * The answer to a structured-output request: the schema filled by the twin's rules (structured.ts), as JSON text; or,
 * as a test asks, that answer cut short (finish_reason length) or made to break the schema.
 */
function structuredReply(
  schema: unknown,
  messages: readonly TwinMessage[],
  malformed: ScriptedReply['malformed'],
): TwinReply & { finishReason?: 'length' } {
  const answer = structuredAnswer(schema, messages);
  if (malformed === 'off_schema') return { content: JSON.stringify(offSchema(answer)), toolCalls: [] };
  const text = JSON.stringify(answer);
  if (malformed === 'truncated')
    return { content: text.slice(0, Math.floor(text.length / 2)), toolCalls: [], finishReason: 'length' };
  return { content: text, toolCalls: [] };
}

const countWords = (text: string) => text.split(/\s+/).filter(Boolean).length;

export function createOpenAiTwin(options: OpenAiTwinOptions): OpenAiTwin {
  const requests: ReceivedCompletion[] = [];
  const scripted: ScriptedReply[] = [];
  const holds = new Set<() => void>();
  let firstTokenMs = options.firstTokenMs ?? 0;
  const chunkMs = options.chunkMs ?? 0;
  let server: Server | undefined;

  const release = () => {
    const count = holds.size;
    for (const resume of [...holds]) resume();
    holds.clear();
    return count;
  };
  /** Waits until released, or the client hangs up. */
  const hold = (res: Response) =>
    new Promise<void>((resolve) => {
      const resume = () => {
        holds.delete(resume);
        resolve();
      };
      holds.add(resume);
      res.once('close', resume);
    });

  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '5mb' }));

  function authorise(req: Request) {
    const header = req.headers.authorization ?? '';
    const key = /^Bearer (.+)$/.exec(header)?.[1];
    if (!key)
      throw new OpenAiError(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        'invalid_request_error',
      );
    // The key is never repeated in the answer (OpenAI shows a masked part of it; the twin none).
    if (!options.apiKeys.some((known) => same(known, key)))
      throw new OpenAiError(401, 'Incorrect API key provided.', 'invalid_request_error', null, 'invalid_api_key');
  }

  app.post('/v1/chat/completions', (req: Request, res: Response, next: NextFunction) => {
    (async () => {
      authorise(req);
      const { model, messages, offered, structured, body } = checkedBody(req.body);
      const received: ReceivedCompletion = { body: structuredClone(body), cutOff: false };
      requests.push(received);
      let finished = false;
      res.once('close', () => {
        if (!finished) received.cutOff = true;
      });
      const script = scripted.shift();
      await sleep(script?.firstTokenMs ?? firstTokenMs);
      if (script?.hang) {
        await hold(res);
        return;
      }
      if (script?.status)
        throw new OpenAiError(
          script.status,
          script.status >= 500 ? 'The server had an error while processing your request.' : 'Scripted error.',
          script.status >= 500 ? 'server_error' : 'invalid_request_error',
        );
      const reply: TwinReply & { finishReason?: 'length' } =
        structured && !script?.content
          ? structuredReply(structured.schema, messages, script?.malformed)
          : (script ?? twinReply(messages, offered));
      const id = `chatcmpl-${randomBytes(12).toString('base64url')}`;
      const created = Math.floor(Date.now() / 1000);
      const toolCalls = reply.toolCalls.map((toolCall: TwinToolCall) => ({
        id: `call_${randomBytes(12).toString('base64url')}`,
        ...toolCall,
      }));
      const finishReason = reply.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop');
      const promptTokens = messages.reduce((sum, message) => sum + countWords(textOf(message.content)), 0);
      const completionTokens =
        countWords(reply.content) + toolCalls.reduce((sum, toolCall) => sum + countWords(toolCall.arguments) + 1, 0);
      const usage = {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      };

      if (body.stream !== true) {
        finished = true;
        res.json({
          id,
          object: 'chat.completion',
          created,
          model,
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: reply.content || (toolCalls.length ? null : ''),
                refusal: null,
                annotations: [],
                ...(toolCalls.length
                  ? {
                      tool_calls: toolCalls.map(({ id: callId, name, arguments: args }) => ({
                        id: callId,
                        type: 'function',
                        function: { name, arguments: args },
                      })),
                    }
                  : {}),
              },
              logprobs: null,
              finish_reason: finishReason,
            },
          ],
          usage,
        });
        return;
      }

      const includeUsage = isObject(body.stream_options) && body.stream_options.include_usage === true;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      const send = async (delta: Record<string, unknown>, finish: string | null = null) => {
        if (res.destroyed) return;
        res.write(
          `data: ${JSON.stringify({
            id,
            object: 'chat.completion.chunk',
            created,
            model,
            choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
            ...(includeUsage ? { usage: null } : {}),
          })}\n\n`,
        );
        await sleep(chunkMs);
      };
      await send({ role: 'assistant', content: '', refusal: null });
      const words = wordsOf(reply.content);
      for (const [index, word] of words.entries()) {
        if (index === script?.holdAfterWords) await hold(res);
        await send({ content: word });
      }
      if (script?.holdAfterWords !== undefined && script.holdAfterWords >= words.length) await hold(res);
      for (const [index, toolCall] of toolCalls.entries()) {
        await send({
          tool_calls: [{ index, id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: '' } }],
        });
        for (const fragment of fragmentsOf(toolCall.arguments))
          await send({ tool_calls: [{ index, function: { arguments: fragment } }] });
      }
      await send({}, finishReason);
      if (includeUsage && !res.destroyed)
        res.write(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`,
        );
      finished = true;
      res.end('data: [DONE]\n\n');
    })().catch(next);
  });

  // TEST CONTROL, not OpenAI's.
  app.post('/control/replies', (req, res) => {
    const parsed = z.array(scriptedReplySchema).safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ error: 'invalid_body', issues: parsed.error.issues });
      return;
    }
    scripted.push(...parsed.data);
    res.json({ queued: scripted.length });
  });
  app.post('/control/release', (_req, res) => {
    res.json({ released: release() });
  });
  app.post('/control/latency', (req, res) => {
    const parsed = z.object({ firstTokenMs: z.number().int().min(0).max(600_000) }).safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ error: 'invalid_body', issues: parsed.error.issues });
      return;
    }
    firstTokenMs = parsed.data.firstTokenMs;
    res.json({ firstTokenMs });
  });
  app.get('/control/requests', (_req, res) => {
    res.json({ requests });
  });
  const reset = () => {
    release();
    requests.length = 0;
    scripted.length = 0;
  };
  app.delete('/control/requests', (_req, res) => {
    reset();
    res.status(204).end();
  });

  app.use((_req: Request, _res: Response, next: NextFunction) =>
    next(new OpenAiError(404, 'Unknown request URL.', 'invalid_request_error', null, 'unknown_url')),
  );
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const known =
      error instanceof OpenAiError
        ? error
        : (error as { type?: string }).type === 'entity.parse.failed'
          ? invalid('We could not parse the JSON body of your request.')
          : new OpenAiError(500, 'The server had an error while processing your request.', 'server_error');
    if (res.headersSent) res.destroy();
    else res.status(known.status).json(known.body);
  });

  return {
    async listen(port, host = '127.0.0.1') {
      const listening = await listenHttp(app, port, host);
      server = listening.server;
      return `${listening.url}/v1`;
    },
    async close() {
      release();
      await closeHttp(server);
    },
    requests,
    script(...replies) {
      scripted.push(...replies.map((reply) => scriptedReplySchema.parse(reply)));
    },
    release,
    get held() {
      return holds.size;
    },
    setFirstTokenMs(ms) {
      firstTokenMs = ms;
    },
    reset,
  };
}
