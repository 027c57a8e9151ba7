import OpenAI from 'openai';
import { cappedFetch } from './http/capped-fetch';

/**
 * The official `openai` SDK as this product uses it for any OpenAI-compatible chat completions endpoint: the model
 * dialogue engine (lib/conversation/model-engine.ts, DIALOGUE_*) and call intelligence's model
 * (lib/call-intelligence/model-intelligence.ts, INTELLIGENCE_*). Only the base URL and the key differ between
 * production and the tests (the OpenAI twin, simulators/openai-twin/).
 */
export interface OpenAiEndpoint {
  /** e.g. https://api.openai.com/v1: requests go to <baseURL>/chat/completions. */
  baseURL: string;
  /** Sent as a bearer token. Never logged, never put in an error. */
  apiKey?: string;
  /** The SDK's own per-request timeout; the callers bound a request with their own signal as well. */
  timeoutMs: number;
}

/**
 * The most of a model's answer read, streamed or not. Its largest legitimate answer is MODEL_MAX_TOKENS_CHAT's most,
 * 8,192 tokens, streamed: each token an event repeating its JSON framing, some 200 bytes, about 1.6 MB (16,384 tokens
 * of call intelligence, not streamed, are well under 1 MB). 4 MiB leaves twice that; an answer past it is a broken or
 * hostile endpoint: it is cut and the request fails (`EBODYCAP`) instead of filling the process's memory.
 */
export const MODEL_BODY_CAP_BYTES = 4 * 1024 * 1024;

/** `fetch` of every model request: capped at MODEL_BODY_CAP_BYTES, a streamed answer still streaming. */
export const modelFetch = cappedFetch(MODEL_BODY_CAP_BYTES);

/**
 * A client of the endpoint with the SDK's retries off (`maxRetries: 0`): each caller decides what a failure costs (the
 * dialogue engine apologises at once; call intelligence falls back to its rules).
 */
export function openAiClient(endpoint: OpenAiEndpoint): OpenAI {
  return new OpenAI({
    baseURL: endpoint.baseURL,
    // An endpoint without keys (a local server) still gets a bearer header: the SDK insists on one.
    apiKey: endpoint.apiKey ?? 'no-key',
    maxRetries: 0,
    timeout: endpoint.timeoutMs,
    fetch: modelFetch,
  });
}

/** A request that was abandoned because it took longer than allowed. */
export class ModelTimeout extends Error {
  constructor() {
    super('the model took longer than allowed');
  }
}

/**
 * How a model failure is logged or recorded: its kind, HTTP status and OpenAI's error `code` only; never a header, the
 * key, a request or the provider's message (OpenAI's 401 message repeats part of the key).
 */
export function modelFailureOf(error: unknown): { failure: string } & Record<string, unknown> {
  if (error instanceof ModelTimeout) return { failure: 'timeout' };
  if (error instanceof OpenAI.APIError)
    return { failure: error.constructor.name, status: error.status ?? null, code: error.code ?? null };
  return { failure: error instanceof Error ? error.constructor.name : typeof error };
}

/** How much of a conversation a model request carries: at most `messages` messages and `chars` characters. */
export interface HistoryWindow {
  messages: number;
  chars: number;
}

/**
 * The defaults of the model bounds (lib/config.ts MODEL_*, docs/configuration.md#model-bounds), for callers built
 * without a config (tests, tools). Why these figures: docs/configuration.md#model-bounds.
 */
export const MODEL_BOUNDS_DEFAULTS = {
  dialogueMaxTokens: 300,
  chatMaxTokens: 1_000,
  intelligenceMaxTokens: 2_000,
  maxToolRounds: 3,
  history: { messages: 40, chars: 24_000 } satisfies HistoryWindow,
} as const;

type WindowedMessage = { role: string; content?: unknown };

/** The characters a message costs: its text content, or its JSON (tool calls, parts). */
const charsOf = (message: WindowedMessage) =>
  typeof message.content === 'string' ? message.content.length : JSON.stringify(message).length;

/**
 * The latest messages of a history within the window: walked back from the newest (always kept, whatever its size)
 * while both bounds hold, so a request's cost no longer grows with the conversation. A window never opens on a `tool`
 * message: its assistant message (the tool call) was cut, and a tool answer without its call is refused by the API.
 * Linear in the messages kept.
 */
export function windowOf<M extends WindowedMessage>(history: readonly M[], window: HistoryWindow): M[] {
  let start = history.length;
  let chars = 0;
  while (start > 0) {
    const cost = charsOf(history[start - 1]!);
    const kept = history.length - start;
    if (kept > 0 && (kept + 1 > window.messages || chars + cost > window.chars)) break;
    chars += cost;
    start -= 1;
  }
  while (start < history.length - 1 && history[start]!.role === 'tool') start += 1;
  return history.slice(start);
}

/** The history window a config names (MODEL_HISTORY_*), each bound left unset taking its default. */
export const historyWindowOf = (config: {
  MODEL_HISTORY_MESSAGES?: number;
  MODEL_HISTORY_CHARS?: number;
}): HistoryWindow => ({
  messages: config.MODEL_HISTORY_MESSAGES ?? MODEL_BOUNDS_DEFAULTS.history.messages,
  chars: config.MODEL_HISTORY_CHARS ?? MODEL_BOUNDS_DEFAULTS.history.chars,
});
