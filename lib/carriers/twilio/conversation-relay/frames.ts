import { z } from 'zod';

/**
 * ConversationRelay's WebSocket messages, both directions (docs/features/conversation/relay.md#the-protocol), as Twilio
 * documents them (https://www.twilio.com/docs/voice/conversationrelay/websocket-messages) and Telnyx documents the
 * same frames (https://developers.telnyx.com/api-reference/websockets/conversationrelay-websocket-channel). Every
 * message is one JSON text frame with a `type`. Fields a carrier may add are kept (loose objects); what the product
 * reads is checked.
 */

// ---- From Twilio (the carrier) to the application.

/** Sent once, right after the socket opens: the session, the call, and the TwiML's <Parameter>s. */
export const setupFrameSchema = z.looseObject({
  type: z.literal('setup'),
  sessionId: z.string(),
  callSid: z.string(),
  /** Telnyx's: the call_control_id (its callSid is the same). */
  callControlId: z.string().optional(),
  accountSid: z.string().optional(),
  parentCallSid: z.string().optional(),
  from: z.string(),
  to: z.string(),
  forwardedFrom: z.string().optional(),
  callType: z.string().optional(),
  callerName: z.string().optional(),
  direction: z.string(),
  callStatus: z.string().optional(),
  customParameters: z.record(z.string(), z.string()).default({}),
});

/**
 * The most characters of one utterance the conversation takes (docs/features/conversation/relay.md#one-turn-at-a-time):
 * a minute of speech is about 900 characters, so 4,000 is four minutes of one breath, the test session's and the
 * campaign chat's message cap too. The carrier's own frame may hold more (up to the socket's 64 KiB): the rest is cut,
 * so every function over the lead's words (redaction, intents, the model) sees at most this.
 */
export const MAX_VOICE_PROMPT_CHARS = 4_000;
const utterance = z.string().transform((text) => text.slice(0, MAX_VOICE_PROMPT_CHARS));

/** What the caller said, transcribed; `last: false` is a partial result (only with partialPrompts on). */
export const promptFrameSchema = z.looseObject({
  type: z.literal('prompt'),
  voicePrompt: utterance,
  lang: z.string().optional(),
  last: z.boolean(),
});

/** The caller spoke over the agent: what had been said of the agent's words until then, and for how long. */
export const interruptFrameSchema = z.looseObject({
  type: z.literal('interrupt'),
  utteranceUntilInterrupt: utterance,
  // Twilio's page shows it both as a number and as a string of digits.
  durationUntilInterruptMs: z.coerce.number(),
});

/** A key the caller pressed (with dtmfDetection on). */
export const dtmfFrameSchema = z.looseObject({ type: z.literal('dtmf'), digit: z.string() });

/** Something went wrong in the session (e.g. a message of the application's that Twilio could not read: 64107). */
export const errorFrameSchema = z.looseObject({ type: z.literal('error'), description: z.string() });

export const inboundFrameSchema = z.discriminatedUnion('type', [
  setupFrameSchema,
  promptFrameSchema,
  interruptFrameSchema,
  dtmfFrameSchema,
  errorFrameSchema,
]);
export type SetupFrame = z.infer<typeof setupFrameSchema>;
export type PromptFrame = z.infer<typeof promptFrameSchema>;
export type InterruptFrame = z.infer<typeof interruptFrameSchema>;
export type InboundFrame = z.infer<typeof inboundFrameSchema>;

// ---- From the application to Twilio.

/**
 * Whether the caller may cut what the agent says (Twilio's interruptible values: a boolean is read as any / none) and
 * whether it may cut what was said before it (preemptible): the same two fields on every spoken frame.
 */
const cuttable = {
  interruptible: z.union([z.boolean(), z.enum(['none', 'dtmf', 'speech', 'any'])]).optional(),
  preemptible: z.boolean().optional(),
};

/** A token of text to speak; `last: true` ends the agent's turn (the talk cycle). */
export const textFrameSchema = z.object({
  type: z.literal('text'),
  token: z.string(),
  last: z.boolean(),
  lang: z.string().optional(),
  ...cuttable,
});

/** An audio file to play. */
export const playFrameSchema = z.object({
  type: z.literal('play'),
  source: z.string().url(),
  loop: z.number().int().min(0).optional(),
  ...cuttable,
});

/** Digits to send on the call (0-9, w for a half-second wait, *, #). */
export const sendDigitsFrameSchema = z.object({
  type: z.literal('sendDigits'),
  digits: z.string().regex(/^[0-9w*#]+$/),
});

/** Switches the speech (ttsLanguage) and the recognition (transcriptionLanguage) language. */
export const languageFrameSchema = z.object({
  type: z.literal('language'),
  ttsLanguage: z.string().optional(),
  transcriptionLanguage: z.string().optional(),
});

/** Ends the session; handoffData (a string, usually JSON) goes to the <Connect> action URL. */
export const endFrameSchema = z.object({ type: z.literal('end'), handoffData: z.string().optional() });

export const outboundFrameSchema = z.discriminatedUnion('type', [
  textFrameSchema,
  playFrameSchema,
  sendDigitsFrameSchema,
  languageFrameSchema,
  endFrameSchema,
]);
export type TextFrame = z.infer<typeof textFrameSchema>;
export type EndFrame = z.infer<typeof endFrameSchema>;
export type OutboundFrame = z.infer<typeof outboundFrameSchema>;

/** The custom <Parameter> naming the product's attempt (the path names it too; the setup repeats it). */
export const RELAY_ATTEMPT_PARAMETER = 'attemptId';

/** A frame read from the socket's text, or null when it is not one of Twilio's messages. */
export function parseInboundFrame(text: string): InboundFrame | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = inboundFrameSchema.safeParse(json);
  return parsed.success ? parsed.data : null;
}

/** A WebSocket message's text (the ws package hands a Buffer, an ArrayBuffer or fragments). */
export function messageText(data: Buffer | ArrayBuffer | Buffer[]): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
}
