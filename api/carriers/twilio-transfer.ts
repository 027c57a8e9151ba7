import type { Request } from 'express';
import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { hangupTwiml, sayThenHangupTwiml, sayTwiml, transferTwiml } from '../../lib/carriers/twilio/twiml';
import { twilioCallbackUrl } from '../../lib/carriers/twilio/twilio-urls';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';
import { verifiedConnectionOf } from './twilio-callbacks';
import { markConversationOutcome, settleTransfer, transferCallOf } from '../conversation/conversation-tool-store';
import { nobodyAnsweredLine, TRANSFER_RING_SECONDS, whisperLine } from '../conversation/transfer';

/**
 * transfer_to_human on Twilio (docs/features/conversation/tools.md#transfer_to_human). The tool marks the call
 * (Call.transferRequestedAt) and the conversation ends with `end`; Twilio then asks <Connect>'s action what to do:
 * <Dial> of the agent's transfer number, ringing TRANSFER_RING_SECONDS, or hang up when no transfer was asked; a warm
 * transfer's number is a <Number url> whose document (transfer-whisper) the human hears before the bridge. The
 * <Dial>'s action tells how it went (Call.transferStatus): answered (DialCallStatus completed), the call ends transferred; busy, no answer or
 * failed, the lead hears that nobody could take the call and the call ends callback_requested with no time of its own:
 * the ladder's next rung calls again (or the ladder ends, past its last rung).
 */

/** <Connect action>'s request when a ConversationRelay session ends (Twilio sends more, kept as sent). */
export const relayEndedRequestSchema = z.looseObject({
  CallSid: z.string().check(atMostCodePoints(100)).optional(),
  SessionId: z.string().check(atMostCodePoints(100)).optional(),
  SessionStatus: z
    .string()
    .check(atMostCodePoints(40))
    .optional()
    .describe('ended (the application sent end), completed, or failed.'),
  SessionDuration: z.string().check(atMostCodePoints(40)).optional(),
  HandoffData: z.string().check(atMostCodePoints(10_000)).optional().describe("The end message's handoffData."),
});

/** <Dial action>'s request (Twilio sends more, kept as sent). */
export const transferEndedRequestSchema = z.looseObject({
  CallSid: z.string().check(atMostCodePoints(100)).optional(),
  DialCallStatus: z
    .string()
    .check(atMostCodePoints(40))
    .optional()
    .describe('completed, busy, no-answer, failed or canceled.'),
  DialCallSid: z.string().check(atMostCodePoints(100)).optional(),
  DialCallDuration: z.string().check(atMostCodePoints(40)).optional(),
});

/** A warm transfer's <Number url> request: the human's leg's call (Twilio sends more, kept as sent). */
export const transferWhisperRequestSchema = z.looseObject({
  CallSid: z.string().check(atMostCodePoints(100)).optional().describe("The human's leg."),
  ParentCallSid: z.string().check(atMostCodePoints(100)).optional().describe("The lead's call."),
});

async function callOf(services: AppServices, req: Request, attemptId: string) {
  const connection = verifiedConnectionOf(req);
  const call = await transferCallOf(poolSql(services.sql), attemptId, connection.id);
  if (!call) throw new Refusal(ErrorCode.unknown_call);
  return { connection, call };
}

/** The conversation ended: the transfer's <Dial> when its tool asked for one (warm: with its whisper), else hang up. */
export async function twilioRelayEnded(services: AppServices, req: Request, attemptId: string): Promise<string> {
  const { connection, call } = await callOf(services, req, attemptId);
  if (!call.transferRequestedAt || !call.transferNumber) return hangupTwiml();
  const url = (kind: 'transfer-ended' | 'transfer-whisper') =>
    twilioCallbackUrl(services.publicBaseUrl!, kind, { connectionId: connection.id, attemptId });
  return transferTwiml({
    transferNumber: call.transferNumber,
    callerId: call.fromNumber,
    timeoutSec: TRANSFER_RING_SECONDS,
    endedUrl: url('transfer-ended'),
    ...(call.transferMode === 'warm' && { whisperUrl: url('transfer-whisper') }),
  });
}

/**
 * A warm transfer's <Number url>: the human answered, and hears the call's summary before Twilio connects them to the
 * lead (the document ends after it). Changes nothing: a repeated request answers the same.
 */
export async function twilioTransferWhisper(services: AppServices, req: Request, attemptId: string): Promise<string> {
  const { call } = await callOf(services, req, attemptId);
  const language = call.language ?? 'en';
  return sayTwiml(whisperLine(call.transferSummary, language), call.voiceId ?? '', language);
}

/** The transfer's <Dial> ended: transferred when the human answered, else the lead is told and the call ends. */
export async function twilioTransferEnded(
  services: AppServices,
  req: Request,
  attemptId: string,
  form: z.infer<typeof transferEndedRequestSchema>,
): Promise<string> {
  const { call } = await callOf(services, req, attemptId);
  const sql = poolSql(services.sql);
  if (form.DialCallStatus === 'completed') {
    await settleTransfer(sql, call.id, 'answered');
    await markConversationOutcome(sql, call.id, 'transferred');
    return hangupTwiml();
  }
  await settleTransfer(sql, call.id, 'unanswered');
  await markConversationOutcome(sql, call.id, 'callback_requested', { callbackAt: null });
  const language = call.language ?? 'en';
  return sayThenHangupTwiml(nobodyAnsweredLine(language), call.voiceId ?? '', language);
}
