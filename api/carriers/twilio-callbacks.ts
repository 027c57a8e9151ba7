import type { Request } from 'express';
import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { applyAnsweredBy } from '../../lib/calls/call-end';
import type { OpenedCarrierConnection } from '../../lib/carrier-connections/connections';
import { openedConnectionsOf, verifiedConnection } from '../../lib/carrier-connections/opened-connections';
import {
  answeredByEventOfTwilio,
  callEventOfTwilio,
  publicUrlOf,
  signedByTwilio,
  TWILIO_SIGNATURE_HEADER,
  type TwilioAmdCallback,
  type TwilioStatusCallback,
} from '../../lib/carriers/twilio/twilio-callbacks';
import { relayTwimlOfCall, twimlOfCall, type TwimlRequest } from '../../lib/carriers/twilio/twiml';
import { callConversationEngine } from '../../lib/conversation/conversation-engine';
import { scriptGreeting } from '../../lib/conversation/script-engine';
import { createTwilioCalls } from '../../lib/carriers/twilio/twilio-calls';
import type { TwilioConnection } from '../../lib/carriers/twilio/twilio-client';
import { twilioCallbackUrl, twilioRelayUrl } from '../../lib/carriers/twilio/twilio-urls';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import { receiveCallEvent } from '../calls/telephony-events';
import type { AppServices } from '../app-services';
import { endWalkOnOptOut, paidTimeLeftMs, scriptCallOf, scriptCallOfRow, storeScriptTurns } from './script-calls';
import { clearVoicemailRedirect, markVoicemailRedirect } from './carrier-call-store';
import { startTwilioRecording } from './twilio-recordings';
import { recordsCallsOn } from '../../lib/recordings/recording-notice';

/** The connection whose auth token verified a request, for its handler (the path named it; the body never does). */
const verified = new WeakMap<Request, TwilioConnection>();

const isTwilio = (connection: OpenedCarrierConnection): connection is TwilioConnection =>
  connection.provider === 'twilio' || connection.provider === 'twilio-twin';

/**
 * 401 invalid_signature unless Twilio signed this request with the auth token of the live Twilio connection its path
 * names, over the public URL it called (PUBLIC_BASE_URL + the path and query as received) and its form. An unknown or
 * removed connection, another carrier's, one without an auth token (an API key connection made before the token was
 * asked for), a missing or wrong signature: all the same 401, before the body is judged, and nothing changes. The
 * connection is the one this process keeps (opened within the last seconds, lib/carrier-connections/opened-connections.ts), read
 * again when its kept token refuses the signature.
 */
export async function assertSignedByTwilio(req: Request, services: AppServices): Promise<void> {
  const form = (req.body ?? {}) as Record<string, unknown>;
  const url = publicUrlOf(services.publicBaseUrl ?? '', req.originalUrl);
  const connection = await signedTwilioConnection(
    services,
    String(req.params.connectionId),
    req.get(TWILIO_SIGNATURE_HEADER),
    url,
    form,
  );
  if (!connection) throw new Refusal(ErrorCode.invalid_signature);
  verified.set(req, connection);
}

/**
 * The live Twilio connection `connectionId` names, when `signature` is its account's signature of `url` and `form`
 * (a callback's, a TwiML request's, a ConversationRelay handshake's with no form); null otherwise.
 */
export async function signedTwilioConnection(
  services: AppServices,
  connectionId: string,
  signature: string | undefined,
  url: string,
  form: Record<string, unknown>,
): Promise<TwilioConnection | null> {
  const connection =
    services.carrierKeyring && services.publicBaseUrl
      ? await verifiedConnection(
          openedConnectionsOf(services.db, services.carrierKeyring),
          connectionId,
          (opened) =>
            isTwilio(opened) &&
            // The account's auth token, whether the connection dials with it or with an API key: Twilio signs with it alone.
            signedByTwilio(opened.secrets.authToken ?? null, signature, url, form),
        )
      : null;
  return connection && isTwilio(connection) ? connection : null;
}

/**
 * The verified connection of the request. The call of the attempt its URL names must have been placed through that
 * very connection: each handler finds the call by the attempt and the connection together, so that a callback signed
 * by one workspace's account for another's call (or a call of another connection) is unknown_call, and nothing
 * changes.
 */
export function verifiedConnectionOf(req: Request): TwilioConnection {
  const connection = verified.get(req);
  // assertSignedByTwilio runs before every handler here: a request without it never reaches one.
  if (!connection) throw new Refusal(ErrorCode.invalid_signature);
  return connection;
}

/**
 * A status callback applied as the product's carrier event (api/calls/telephony-events.ts, lib/calls/call-end.ts): once
 * per CallSid and SequenceNumber, only forward, a terminal state ending the call and signalling its workflow.
 */
export async function receiveTwilioStatus(
  services: AppServices,
  req: Request,
  attemptId: string,
  form: TwilioStatusCallback,
) {
  const connection = verifiedConnectionOf(req);
  return receiveCallEvent(services, connection.provider, callEventOfTwilio(form, attemptId), connection.id);
}

/** AnsweredBy values that say a machine's greeting has ended: the moment to leave the voicemail message. */
const MACHINE_MESSAGE_END = new Set(['machine_end_beep', 'machine_end_silence', 'machine_end_other']);

/**
 * The asynchronous answering-machine detection's result: the call's answeredBy, while it is still on. When it says a
 * machine's greeting has ended (machine_end_*), the call is redirected (Twilio's call update, through the connection
 * that signed the request) to its voicemail step, .../twiml/voicemail, which leaves the agent's message or hangs up.
 * Only while the call is on, no message has been left and no redirect asked (Call.voicemailRedirectAt): a repeated or
 * late result redirects nothing. A redirect that fails at Twilio is unmarked and fails the request (5xx), so Twilio's
 * retry of the callback tries again.
 */
export async function receiveTwilioAmd(
  services: AppServices,
  req: Request,
  attemptId: string,
  form: TwilioAmdCallback,
) {
  const connection = verifiedConnectionOf(req);
  const result = await applyAnsweredBy(
    poolSql(services.sql),
    connection.provider,
    answeredByEventOfTwilio(form, attemptId),
    connection.id,
  );
  if (!result.found) throw new Refusal(ErrorCode.unknown_call);
  if (MACHINE_MESSAGE_END.has(form.AnsweredBy)) {
    // Marked redirected in the statement that finds the call still on: of two deliveries of this callback at once,
    // one redirects.
    const live = await markVoicemailRedirect(poolSql(services.sql), attemptId, connection.id);
    if (live)
      try {
        await createTwilioCalls(connection, { publicBaseUrl: services.publicBaseUrl! }).redirect(
          form.CallSid,
          `${twilioCallbackUrl(services.publicBaseUrl!, 'twiml', { connectionId: connection.id, attemptId })}/voicemail`,
        );
      } catch (error) {
        // Not redirected: Twilio's retry of the callback is to redirect again.
        await clearVoicemailRedirect(poolSql(services.sql), live.id);
        throw error;
      }
  }
  return { received: true as const, applied: result.applied };
}

/** What a TwiML request says besides its call (Twilio sends more, kept as sent). */
export const twilioTwimlRequestSchema = z.looseObject({
  CallSid: z.string().check(atMostCodePoints(100)).optional(),
  AnsweredBy: z.string().check(atMostCodePoints(100)).optional().describe('With synchronous detection: who answered.'),
  SpeechResult: z
    .string()
    .check(atMostCodePoints(10_000))
    .optional()
    .describe("On a Gather's action: what the lead said."),
  Confidence: z
    .string()
    .check(atMostCodePoints(40))
    .optional()
    .describe("On a Gather's action: the recognition's confidence, 0 to 1."),
});
export type TwilioTwimlRequest = z.infer<typeof twilioTwimlRequestSchema>;

/** The step a TwiML URL names: none (the answer), a question's number, or voicemail. */
export type TwimlStepOfUrl = { kind: 'answer' } | { kind: 'step'; step: number } | { kind: 'voicemail' };

const confidenceOf = (value: string | undefined): number | null => {
  const confidence = value === undefined ? NaN : Number(value);
  return Number.isFinite(confidence) ? Math.min(1, Math.max(0, confidence)) : null;
};

/**
 * The TwiML of the call the URL names, for the step it names (lib/carriers/twilio/twiml.ts, the seam): its agent
 * (with its dictionaries' terms as hints) and its lead. The turns the step makes are stored once per call, step and
 * part (a replayed or out-of-order request adds and moves nothing); the voicemail step with a message marks the call
 * voicemailLeftAt, so that its end is voicemail_left. A step the agent's script does not have is unknown_call.
 */
export async function twilioCallTwiml(
  services: AppServices,
  req: Request,
  attemptId: string,
  stepOfUrl: TwimlStepOfUrl,
  form: TwilioTwimlRequest,
): Promise<string> {
  const connection = verifiedConnectionOf(req);
  // Found by the attempt and the connection together (verifiedConnectionOf).
  const call = await scriptCallOf(services, attemptId, connection.id);
  const questions = call.agent?.script.questions.length ?? 0;
  if (stepOfUrl.kind === 'step' && stepOfUrl.step > questions) throw new Refusal(ErrorCode.unknown_call);
  // Synchronous detection tells who answered on the request itself: a machine's greeting ended is the voicemail step.
  const request: TwimlRequest =
    stepOfUrl.kind === 'voicemail' || (form.AnsweredBy !== undefined && MACHINE_MESSAGE_END.has(form.AnsweredBy))
      ? { kind: 'voicemail' }
      : stepOfUrl.kind === 'answer'
        ? { kind: 'answer' }
        : {
            kind: 'step',
            step: stepOfUrl.step,
            heard:
              form.SpeechResult !== undefined
                ? { text: form.SpeechResult, confidence: confidenceOf(form.Confidence) }
                : null,
          };
  // Recorded from the answer, before the conversation the TwiML runs (docs/features/recordings.md#twilio).
  if (request.kind === 'answer' && call.recordingEnabled && recordsCallsOn(call.provider))
    await startTwilioRecording(services, connection, call, form.CallSid, attemptId);
  if (
    request.kind === 'answer' &&
    call.agent &&
    callConversationEngine(services.conversationEngine, call.agent) === 'relay'
  ) {
    // The conversation runs on the call's socket (api/carriers/relay-socket.ts), which stores its turns.
    const scriptCall = scriptCallOfRow(call);
    return relayTwimlOfCall(scriptCall, {
      relayUrl: twilioRelayUrl(services.publicBaseUrl!, { connectionId: connection.id, attemptId }),
      attemptId,
      welcomeGreeting: scriptGreeting(scriptCall),
      endedUrl: twilioCallbackUrl(services.publicBaseUrl!, 'relay-ended', { connectionId: connection.id, attemptId }),
    });
  }
  const { twiml, turns } = twimlOfCall(
    {
      ...scriptCallOfRow(call),
      twimlUrl: twilioCallbackUrl(services.publicBaseUrl!, 'twiml', { connectionId: connection.id, attemptId }),
    },
    request,
    await paidTimeLeftMs(services, call),
  );
  await storeScriptTurns(services, call.id, turns, request.kind === 'voicemail' && turns.length > 0);
  await endWalkOnOptOut(services, call, request);
  return twiml;
}
