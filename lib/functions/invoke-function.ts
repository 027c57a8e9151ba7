import { createHash } from 'node:crypto';
import { EgressError, type Egress } from '../http/egress';
import type { Keyring } from '../secrets/keyring';
import type { RunSql } from '../run-sql';
import { FUNCTION_LIMITS, renderPresets } from './function-definition';
import {
  finishInvocation,
  liveSecretRows,
  presetContextOf,
  settleRepeatedInvocation,
  startInvocation,
  type BoundFunctionRow,
} from './function-store';
import { openSigningSecrets, signatureHeader } from './signing-secrets';

/*
 * One call of a custom function during a call (docs/features/functions.md#the-request): a signed JSON request through
 * the egress guard, sent at most once per tool call, and what the model is told of it as one string.
 */

export type InvocationStatus =
  'ok' | 'http_error' | 'timed_out' | 'refused' | 'too_large' | 'invalid_arguments' | 'repeated';

export interface FunctionCallResult {
  /** The endpoint answered 2xx. */
  ok: boolean;
  status: InvocationStatus;
  /** What the model is told: one line of at most FUNCTION_LIMITS.resultLength code points (plus the cut's mark). */
  result: string;
}

export interface InvokeDependencies {
  sql: RunSql;
  egress: Egress;
  /** SECRETS_KEYS: the signing secrets are sealed with it; unset, no function is called. */
  keyring: Keyring | undefined;
  /** Milliseconds, for the duration recorded. */
  clock?: () => number;
}

export interface FunctionToolCall {
  callId: string;
  /** The model's tool-call id, or the script's step: with the call, what makes the idempotency key. */
  toolCallId: string;
  fn: BoundFunctionRow;
  arguments: unknown;
}

/**
 * The same for every try of one tool call of one call (a crash and a retry included), different for any other:
 * `fncall_` and 32 hex digits of SHA-256 over the call id and the tool-call id.
 */
export const idempotencyKeyOf = (callId: string, toolCallId: string) =>
  `fncall_${createHash('sha256').update(`${callId}\n${toolCallId}`).digest('hex').slice(0, 32)}`;

/** One line, at most the cap in code points, the cut said. Linear in the text. */
export function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const points = Array.from(flat);
  return points.length <= FUNCTION_LIMITS.resultLength
    ? flat
    : `${points.slice(0, FUNCTION_LIMITS.resultLength).join('')} … (cut: the answer was longer)`;
}

/** The answer a model is given: a JSON object's string `result` when it has one, else the body as it came. */
function answerText(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === 'object' && typeof (parsed as { result?: unknown }).result === 'string')
      return (parsed as { result: string }).result;
  } catch {
    // Not JSON: the text itself.
  }
  return body;
}

const isArgumentsObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export async function invokeFunction(deps: InvokeDependencies, call: FunctionToolCall): Promise<FunctionCallResult> {
  const { fn } = call;
  const clock = deps.clock ?? Date.now;
  if (
    !isArgumentsObject(call.arguments) ||
    Buffer.byteLength(JSON.stringify(call.arguments)) > FUNCTION_LIMITS.argumentsBytes
  )
    return {
      ok: false,
      status: 'invalid_arguments',
      result: `${fn.name} was not called: its arguments must be a JSON object of at most ${FUNCTION_LIMITS.argumentsBytes} bytes.`,
    };
  const args = call.arguments;
  const idempotencyKey = idempotencyKeyOf(call.callId, call.toolCallId);
  const context = await presetContextOf(deps.sql, call.callId);
  if (!context) throw new Error(`call ${call.callId} not found`);
  if (!deps.keyring) throw new Error('SECRETS_KEYS is not set: function requests cannot be signed');
  const secrets = openSigningSecrets(deps.keyring, await liveSecretRows(deps.sql, fn.workspaceId));
  if (secrets.length === 0) throw new Error(`workspace ${fn.workspaceId} has no function signing secret`);

  const invocationId = await startInvocation(
    deps.sql,
    {
      workspaceId: fn.workspaceId,
      callId: call.callId,
      functionId: fn.id,
      toolCallId: call.toolCallId,
      idempotencyKey,
    },
    args,
  );
  if (!invocationId) {
    // This tool call was sent before (a retry after a crash, a replayed step): never sent twice.
    const earlier = await settleRepeatedInvocation(deps.sql, idempotencyKey);
    return {
      ok: false,
      status: 'repeated',
      result:
        earlier?.status === 'ok'
          ? `${fn.name} was already called for this request and answered; it is not called again.`
          : `Outcome unknown: ${fn.name} was already called for this request and it is not known whether it acted; it is not called again. Do not say it was done.`,
    };
  }

  const body = JSON.stringify({
    function: fn.name,
    toolCallId: call.toolCallId,
    call: { id: call.callId },
    arguments: args,
    presets: renderPresets(fn.presets, context),
  });
  const timestamp = Math.floor(clock() / 1000);
  const started = clock();
  const finish = async (
    status: InvocationStatus,
    httpStatus: number | null,
    resultBytes: number | null,
    result: string,
  ) => {
    await finishInvocation(deps.sql, invocationId, { status, httpStatus, durationMs: clock() - started, resultBytes });
    return { ok: status === 'ok', status, result };
  };
  try {
    const response = await deps.egress.request(fn.url, {
      method: fn.method,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'workspace-functions/1',
        'idempotency-key': idempotencyKey,
        'webhook-id': idempotencyKey,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secrets, idempotencyKey, timestamp, body),
      },
      body,
      timeoutMs: fn.timeoutMs,
      maxResponseBytes: FUNCTION_LIMITS.responseBytes,
    });
    const bytes = Buffer.byteLength(response.text);
    if (response.status >= 200 && response.status < 300)
      return finish('ok', response.status, bytes, oneLine(answerText(response.text)) || `${fn.name} was done.`);
    return finish(
      'http_error',
      response.status,
      bytes,
      oneLine(`${fn.name} failed: its endpoint answered HTTP ${response.status}. ${answerText(response.text)}`),
    );
  } catch (error) {
    if (!(error instanceof EgressError)) throw error;
    if (error.failure === 'timed out')
      return finish(
        'timed_out',
        null,
        null,
        `Outcome unknown: ${fn.name} did not answer within ${fn.timeoutMs / 1000} s. It may or may not have acted, and ` +
          'it is not called again. Do not say it was done; say it could not be confirmed.',
      );
    if (error.failure === 'too large')
      return finish(
        'too_large',
        null,
        null,
        `${fn.name} answered, but its answer was over ${FUNCTION_LIMITS.responseBytes / 1024} KiB and was not read.`,
      );
    return finish(
      'refused',
      null,
      null,
      `${fn.name} failed: its endpoint could not be reached or broke the connection off. It is not called again; ` +
        'if it may have acted, say it could not be confirmed.',
    );
  }
}
