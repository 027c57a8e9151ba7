import { timingSafeEqual } from 'node:crypto';
import twilio from 'twilio';
import { z } from 'zod';
import { atMostCodePoints } from '../../code-point-length';
import type { AnsweredByEvent } from '../../calls/call-end';
import type { CallEvent } from '../../calls/call-event';
import { isTerminalCallState } from '../../calls/call-states';
import {
  answeredByOfTwilio,
  carrierStateOfTwilio,
  failureReasonOfTwilio,
  TWILIO_ANSWERED_BY,
  TWILIO_CALL_STATUSES,
} from './twilio-states';

/** The header Twilio signs its requests with: base64 HMAC-SHA1, with the account's auth token, of the URL and form. */
export const TWILIO_SIGNATURE_HEADER = 'X-Twilio-Signature';

/**
 * The URL Twilio called, which its signature covers: the API's public address (PUBLIC_BASE_URL, which may carry a
 * path prefix a proxy strips) followed by the path and query exactly as received (Express's originalUrl, not
 * decoded or normalised).
 */
export function publicUrlOf(publicBaseUrl: string, originalUrl: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${originalUrl}`;
}

/**
 * Whether Twilio signed this request, by the SDK: first its signature of the URL exactly as called
 * (getExpectedTwilioSignature, one HMAC, compared in constant time), then, only when that differs, its validateRequest,
 * which also tries the URL with and without its default port, as Twilio may sign either (several HMACs: the common
 * case pays one). Twilio signs with the account's auth token, never with an API key's secret: a connection made with an
 * API key pair holds the auth token for this check alone; one made before it was asked for has none, and its
 * callbacks cannot be verified (docs/features/carriers/twilio.md#twilio-callbacks).
 */
export function signedByTwilio(
  authToken: string | null,
  signature: string | undefined,
  url: string,
  form: Record<string, unknown>,
): boolean {
  if (!authToken || !signature) return false;
  const expected = Buffer.from(twilio.getExpectedTwilioSignature(authToken, url, form as Record<string, string>));
  const given = Buffer.from(signature);
  if (expected.length === given.length && timingSafeEqual(expected, given)) return true;
  return twilio.validateRequest(authToken, signature, url, form);
}

const sid = z.string().regex(/^CA[0-9a-fA-F]{32}$/, 'must be CA followed by 32 hexadecimal digits');

/** What the product reads of a status callback; Twilio sends more (AccountSid, From, To, Direction, ...), kept as sent. */
export const twilioStatusCallbackSchema = z.looseObject({
  CallSid: sid,
  CallStatus: z.enum(TWILIO_CALL_STATUSES),
  SequenceNumber: z
    .string()
    .regex(/^\d{1,9}$/)
    .optional()
    .describe("The order of this callback among the call's."),
  Timestamp: z.string().check(atMostCodePoints(100)).optional().describe('When the state changed (RFC 2822).'),
  CallDuration: z
    .string()
    .regex(/^\d{1,9}$/)
    .optional()
    .describe('Seconds of talk, on the end.'),
  AnsweredBy: z.string().check(atMostCodePoints(100)).optional(),
  SipResponseCode: z.string().check(atMostCodePoints(10)).optional(),
});
export type TwilioStatusCallback = z.infer<typeof twilioStatusCallbackSchema>;

/** The asynchronous answering-machine detection's callback (AsyncAmdStatusCallback). */
export const twilioAmdCallbackSchema = z.looseObject({
  CallSid: sid,
  AnsweredBy: z.enum(TWILIO_ANSWERED_BY).or(z.string().check(atMostCodePoints(100))),
  MachineDetectionDuration: z.string().check(atMostCodePoints(20)).optional(),
});
export type TwilioAmdCallback = z.infer<typeof twilioAmdCallbackSchema>;

/**
 * The recording status callback (RecordingStatusCallback, docs/features/recordings.md#twilio): what the product reads;
 * Twilio sends more (RecordingUrl, RecordingSource, RecordingStartTime, ...), kept as sent. The media is never fetched
 * from the RecordingUrl given here, only from the connection's own base URL by the recording's SID.
 */
export const twilioRecordingCallbackSchema = z.looseObject({
  CallSid: sid,
  RecordingSid: z.string().regex(/^RE[0-9a-fA-F]{32}$/, 'must be RE followed by 32 hexadecimal digits'),
  RecordingStatus: z.enum(['in-progress', 'completed', 'absent', 'failed']),
  RecordingDuration: z
    .string()
    .regex(/^-?\d{1,9}$/)
    .optional()
    .describe('Seconds recorded (-1 or absent until completed).'),
  RecordingChannels: z
    .string()
    .regex(/^[12]$/)
    .optional()
    .describe('1 (mono) or 2 (dual).'),
});
export type TwilioRecordingCallback = z.infer<typeof twilioRecordingCallbackSchema>;

/** Twilio's Timestamp (RFC 2822) as ISO 8601; now when absent or unreadable. */
function occurredAtOf(timestamp: string | undefined): string {
  const at = timestamp ? new Date(timestamp) : null;
  return at && !Number.isNaN(at.getTime()) ? at.toISOString() : new Date().toISOString();
}

/**
 * A status callback as the product's carrier event (lib/calls/call-event.ts), for the attempt its URL names. Its id
 * is the CallSid with the SequenceNumber Twilio numbers a call's callbacks by: a second delivery of one callback is
 * the same event (recorded once), and each state change its own.
 */
export function callEventOfTwilio(form: TwilioStatusCallback, attemptId: string): CallEvent {
  const status = carrierStateOfTwilio(form.CallStatus);
  const terminal = isTerminalCallState(status);
  return {
    eventId: `${form.CallSid}:${form.SequenceNumber ?? form.CallStatus}`,
    providerCallId: form.CallSid,
    attemptId,
    status,
    answeredBy: answeredByOfTwilio(form.AnsweredBy),
    durationMs: terminal && form.CallDuration !== undefined ? Number(form.CallDuration) * 1000 : null,
    reason: status === 'failed' ? failureReasonOfTwilio(form.SipResponseCode) : null,
    occurredAt: occurredAtOf(form.Timestamp),
  };
}

/** The detection's result as the product's answeredBy event (lib/calls/call-end.ts applyAnsweredBy): once per call. */
export function answeredByEventOfTwilio(form: TwilioAmdCallback, attemptId: string): AnsweredByEvent {
  return {
    eventId: `${form.CallSid}:amd`,
    providerCallId: form.CallSid,
    attemptId,
    answeredBy: answeredByOfTwilio(form.AnsweredBy),
    occurredAt: new Date().toISOString(),
    payload: form,
  };
}
