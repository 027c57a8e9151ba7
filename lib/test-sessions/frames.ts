import { z } from 'zod';
import { atMostCodePoints } from '../code-point-length';
import { DIALOGUE_TOOL_NAMES } from '../conversation/tools';
import { TEST_SESSION_END_REASONS, TEST_SESSION_OUTCOMES } from './test-session-store';

/**
 * A web test session's WebSocket messages, both directions (docs/features/test-sessions.md#the-protocol): one JSON
 * object per text frame, each with a `type`. What the client sends is checked strictly (an unknown member or type is
 * answered with an error frame); what the server sends is described here for the OpenAPI description and the tests.
 */

/** The longest message a client may send (as the campaign chat's, spec section 8). */
export const MAX_MESSAGE_LENGTH = 4000;

/** Text PostgreSQL could not store (as every route refuses it, api/http/storable-input.ts): NUL, unpaired surrogates. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const storableText = (schema: z.ZodString) =>
  schema.refine((text) => !UNSTORABLE.test(text), 'must not contain U+0000 or an unpaired UTF-16 surrogate');

// ---- From the client (the developer, speaking as the lead) to the server.

/** What the lead says: one complete utterance. */
export const messageFrameSchema = z.strictObject({
  type: z.literal('message'),
  text: storableText(z.string().trim().min(1).check(atMostCodePoints(MAX_MESSAGE_LENGTH))),
});

/** The lead spoke over the agent, who had said `heardUntil` of its last answer (optional: a text client rarely does). */
export const interruptFrameSchema = z.strictObject({
  type: z.literal('interrupt'),
  heardUntil: storableText(z.string().check(atMostCodePoints(MAX_MESSAGE_LENGTH))),
});

/** The developer ends the session. */
export const endFrameSchema = z.strictObject({ type: z.literal('end') });

export const clientFrameSchema = z.discriminatedUnion('type', [
  messageFrameSchema,
  interruptFrameSchema,
  endFrameSchema,
]);
export type ClientFrame = z.infer<typeof clientFrameSchema>;

// ---- From the server to the client.

/** A piece of the agent's words, streamed as the engine gives them. */
export const tokenFrameSchema = z.object({ type: z.literal('token'), token: z.string() });

/** The agent's turn is over: the client may speak. */
export const turnEndFrameSchema = z.object({ type: z.literal('turn_end') });

/** A tool ran (before the agent's words about it): what it was asked and what it reported; it acted on nothing real. */
export const toolFrameSchema = z.object({
  type: z.literal('tool'),
  name: z
    .union([z.enum(DIALOGUE_TOOL_NAMES), z.string()])
    .describe("One of the four tools, or one of the agent's custom functions (docs/features/functions.md)."),
  arguments: z.record(z.string(), z.unknown()),
  result: z.string(),
  ok: z.boolean(),
});

/** The session is over (the socket closes after it): why, and what it came to. */
export const endedFrameSchema = z.object({
  type: z.literal('ended'),
  reason: z.enum(TEST_SESSION_END_REASONS),
  outcome: z.enum(TEST_SESSION_OUTCOMES),
});

/** A frame the server could not take (the session goes on), in the API's error vocabulary (spec section 7). */
export const errorFrameSchema = z.object({
  type: z.literal('error'),
  error: z.string(),
  message: z.string(),
});

export const serverFrameSchema = z.discriminatedUnion('type', [
  tokenFrameSchema,
  turnEndFrameSchema,
  toolFrameSchema,
  endedFrameSchema,
  errorFrameSchema,
]);
export type ServerFrame = z.infer<typeof serverFrameSchema>;

/** A client frame read from a text message, or why it is not one (an error frame's message). */
export function parseClientFrame(text: string): { frame: ClientFrame } | { problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { problem: 'not JSON: each frame is one JSON object' };
  }
  const parsed = clientFrameSchema.safeParse(json);
  if (parsed.success) return { frame: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { problem: `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}` };
}
