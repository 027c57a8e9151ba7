import OpenAI from 'openai';

/**
 * The official `openai` SDK as this product uses it for any OpenAI-compatible chat completions endpoint: the model
 * dialogue engine (lib/dialogue/model-engine.ts, DIALOGUE_*) and call intelligence's model
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
