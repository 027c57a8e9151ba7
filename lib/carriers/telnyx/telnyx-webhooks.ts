import { z } from 'zod';
import { atMostCodePoints } from '../../code-point-length';
import type { AnsweredByEvent } from '../../calls/call-end';
import type { CallEvent } from '../../calls/call-event';
import { ErrorCode } from '../../error-codes';
import { Refusal } from '../../refusal';
import { answeredByOfTelnyx, endOfTelnyxHangup } from './telnyx-states';

/** The headers Telnyx signs its webhooks with (API v2): Ed25519 over `${timestamp}|${body}`. */
export const TELNYX_SIGNATURE_HEADER = 'telnyx-signature-ed25519';
export const TELNYX_TIMESTAMP_HEADER = 'telnyx-timestamp';

/** A call's recording is saved (docs/features/recordings.md#telnyx): the one event that does not name the call. */
export const TELNYX_RECORDING_SAVED = 'call.recording.saved';

/** What the product reads of a Call Control webhook; Telnyx sends more (kept as sent). */
export const telnyxWebhookSchema = z.looseObject({
  data: z.looseObject({
    event_type: z
      .string()
      .min(1)
      .check(atMostCodePoints(100))
      .describe('call.initiated, call.answered, call.hangup, ...'),
    id: z.string().min(1).check(atMostCodePoints(200)).describe("The event's id: a copy delivered again has the same."),
    occurred_at: z.string().check(atMostCodePoints(100)).optional(),
    payload: z.looseObject({
      call_control_id: z
        .string()
        .min(1)
        .check(atMostCodePoints(400))
        .optional()
        .describe("The call's id: on every event but call.recording.saved, whose payload Telnyx describes without it."),
      client_state: z.string().check(atMostCodePoints(4000)).nullish(),
      hangup_cause: z.string().check(atMostCodePoints(100)).optional(),
      sip_hangup_cause: z.string().check(atMostCodePoints(20)).optional(),
      result: z.string().check(atMostCodePoints(100)).optional().describe("Answering-machine detection's result."),
      status: z.string().check(atMostCodePoints(100)).optional(),
      transcription_data: z
        .looseObject({
          transcript: z.string().check(atMostCodePoints(10_000)),
          confidence: z.number().optional(),
          is_final: z.boolean().optional(),
        })
        .optional(),
      call_leg_id: z.string().check(atMostCodePoints(400)).optional(),
      channels: z.string().check(atMostCodePoints(20)).optional().describe("call.recording.saved's: single or dual."),
    }),
  }),
});
export type TelnyxWebhook = z.infer<typeof telnyxWebhookSchema>;

/**
 * The call_control_id every webhook but call.recording.saved carries: one without it is refused as the schema refuses a
 * body (400 invalid_body), and nothing changes.
 */
export function telnyxCallControlId(webhook: TelnyxWebhook): string {
  const id = webhook.data.payload.call_control_id;
  if (!id)
    throw new Refusal(ErrorCode.invalid_body, {
      issues: [
        {
          path: ['data', 'payload', 'call_control_id'],
          message: `required on ${webhook.data.event_type}`,
          code: 'custom',
        },
      ],
    });
  return id;
}

/** Telnyx's occurred_at as ISO 8601; now when absent or unreadable. */
export function occurredAtOf(webhook: TelnyxWebhook): string {
  const at = webhook.data.occurred_at ? new Date(webhook.data.occurred_at) : null;
  return at && !Number.isNaN(at.getTime()) ? at.toISOString() : new Date().toISOString();
}

/**
 * A call's progress webhook as the product's carrier event (lib/calls/call-event.ts), for the attempt its URL names;
 * null for the webhooks that are not progress. Its id is the call_control_id with the event type: each of these comes
 * once per call, so a copy delivered again is the same event (recorded once), and a late one moves nothing back.
 * call.initiated is queued (it binds the call_control_id to an attempt whose dial answer was lost), call.answered
 * in-progress, call.hangup the end (endOfTelnyxHangup), its talk time `answeredAt` to the hang-up.
 */
export function callEventOfTelnyx(
  webhook: TelnyxWebhook,
  attemptId: string,
  answeredAt: Date | null = null,
): CallEvent | null {
  const { event_type: type, payload } = webhook.data;
  const occurredAt = occurredAtOf(webhook);
  const callControlId = telnyxCallControlId(webhook);
  const base = { eventId: `${callControlId}:${type}`, providerCallId: callControlId, attemptId };
  if (type === 'call.initiated') return { ...base, status: 'queued', occurredAt };
  if (type === 'call.answered') return { ...base, status: 'in-progress', occurredAt };
  if (type !== 'call.hangup') return null;
  const { status, reason } = endOfTelnyxHangup(payload.hangup_cause ?? 'unspecified', payload.sip_hangup_cause);
  const durationMs = answeredAt ? Math.max(0, new Date(occurredAt).getTime() - answeredAt.getTime()) : null;
  return { ...base, status, reason, durationMs: status === 'completed' ? durationMs : null, occurredAt };
}

/** The end of a call's ConversationRelay session (docs/features/conversation/relay.md#telnyx). */
export const TELNYX_CONVERSATION_ENDED = 'call.conversation.ended';

/** Detection's webhooks: who answered (detection.ended), and that a machine's greeting ended (greeting.ended). */
export const TELNYX_DETECTION_ENDED = new Set(['call.machine.detection.ended', 'call.machine.premium.detection.ended']);
export const TELNYX_GREETING_ENDED = new Set(['call.machine.greeting.ended', 'call.machine.premium.greeting.ended']);

/**
 * Detection's result as the product's answeredBy event (lib/calls/call-end.ts applyAnsweredBy), once per call and
 * kind: a greeting's end says a machine, whatever detection said before.
 */
export function answeredByEventOfTelnyx(webhook: TelnyxWebhook, attemptId: string): AnsweredByEvent {
  const { event_type: type, payload } = webhook.data;
  const greeting = TELNYX_GREETING_ENDED.has(type);
  return {
    eventId: `${telnyxCallControlId(webhook)}:${greeting ? 'greeting' : 'amd'}`,
    providerCallId: telnyxCallControlId(webhook),
    attemptId,
    answeredBy: greeting ? 'machine' : answeredByOfTelnyx(payload.result),
    occurredAt: occurredAtOf(webhook),
    payload: webhook.data,
  };
}
