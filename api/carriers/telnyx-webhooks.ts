import type { Request } from 'express';
import { applyAnsweredBy } from '../../lib/calls/call-end';
import { openedConnectionsOf, verifiedConnection } from '../../lib/carrier-connections/opened-connections';
import { callConversationEngine } from '../../lib/conversation/conversation-engine';
import type { ScriptRequest } from '../../lib/conversation/script-walk';
import { createTelnyxCalls } from '../../lib/carriers/telnyx/telnyx-calls';
import { telnyxClientOf, type TelnyxConnection } from '../../lib/carriers/telnyx/telnyx-client';
import { decodeClientState } from '../../lib/carriers/telnyx/telnyx-script';
import {
  answeredByEventOfTelnyx,
  callEventOfTelnyx,
  TELNYX_CONVERSATION_ENDED,
  TELNYX_DETECTION_ENDED,
  TELNYX_GREETING_ENDED,
  TELNYX_RECORDING_SAVED,
  telnyxCallControlId,
  type TelnyxWebhook,
} from '../../lib/carriers/telnyx/telnyx-webhooks';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';
import { receiveCallEvent } from '../calls/telephony-events';
import { rawBodyOf } from '../http/register-routes';
import { scriptCallOf } from './script-calls';
import { callEventAt } from './carrier-call-store';
import { armQuestionWait } from './telnyx-question-waits';
import { startTelnyxRelay, walkTelnyxStep } from './telnyx-walk';
import { telnyxConversationEnded, telnyxHumanLegWebhook } from './telnyx-transfer';
import { afterInboundEvent } from './inbound-calls';
import { receiveTelnyxRecordingSaved, startTelnyxRecording } from './telnyx-recordings';

/** The connection whose public key verified a request, for its handler (the path named it; the body never does). */
const verified = new WeakMap<Request, TelnyxConnection>();

/**
 * 401 invalid_signature unless Telnyx signed this webhook with the key of the live Telnyx connection its path names:
 * the SDK's `webhooks.unwrap` with the connection's public key checks `telnyx-signature-ed25519` (Ed25519 over
 * `telnyx-timestamp|body`, the body's bytes as received) and refuses a timestamp more than 300 s from now (stale: a
 * captured webhook replayed later). An unknown or removed connection, another carrier's, a missing, wrong or stale
 * signature: all the same 401, before the body is judged, and nothing changes.
 */
export async function assertSignedByTelnyx(req: Request, services: AppServices): Promise<void> {
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  const body = rawBodyOf(req).toString('utf8');
  const telnyx =
    services.carrierKeyring && services.publicBaseUrl
      ? await verifiedConnection(
          openedConnectionsOf(services.db, services.carrierKeyring),
          String(req.params.connectionId),
          async (opened) => {
            if (opened.provider !== 'telnyx' && opened.provider !== 'telnyx-twin') return false;
            try {
              await telnyxClientOf(opened as TelnyxConnection).webhooks.unwrap(body, { headers });
              return true;
            } catch {
              return false;
            }
          },
        )
      : null;
  if (!telnyx) throw new Refusal(ErrorCode.invalid_signature);
  verified.set(req, telnyx as TelnyxConnection);
}

/** The verified connection of the request (assertSignedByTelnyx runs before every handler). */
export function verifiedTelnyxConnectionOf(req: Request): TelnyxConnection {
  const connection = verified.get(req);
  if (!connection) throw new Refusal(ErrorCode.invalid_signature);
  return connection;
}

/** When the call was answered, by its call.answered event (recorded once per call): the talk time's start. */
async function answeredAtOf(services: AppServices, provider: string, callControlId: string): Promise<Date | null> {
  return callEventAt(poolSql(services.sql), provider, `${callControlId}:call.answered`);
}

/**
 * A Call Control webhook of the call the URL names (docs/features/carriers/telnyx.md#telnyx-webhooks), once its signature is
 * verified and the call is known to be placed through that very connection (404 unknown_call otherwise, and for a
 * client_state naming another attempt):
 * - call.initiated, call.answered, call.hangup: the product's carrier event (api/calls/telephony-events.ts), once per
 *   call and event type, only forward, the end signalling the call's workflow;
 * - detection ended: who answered (once per call); a person (or not sure) starts the script walk;
 * - a machine's greeting ended: a machine; the voicemail message is said, then the call hung up (no message: hung up);
 * - call.transcription (final): the answer to the question its client_state names, and the next step; an interim
 *   result: the lead has begun to answer, and the question's wait goes on from now;
 * - call.speak.ended of a question: the wait for its answer begins (api/carriers/telnyx-question-waits.ts: unanswered
 *   past ANSWER_TIMEOUT_SECONDS, the walk goes on with "(no answer)");
 * - call.speak.ended of the step's last line when it ends the call: the hang-up;
 * - on the dialogue engine (lib/conversation/conversation-engine.ts: the default, unless the deployment or the agent
 *   asks for the gather walk), a person answering starts ConversationRelay instead of the walk, and
 *   call.conversation.ended transfers the call (transfer_to_human) or hangs it up; the webhooks of the human's leg a
 *   transfer dialed (client_state `human`) say whether the human answered, and a warm transfer's summary and bridge
 *   follow them (api/carriers/telnyx-transfer.ts);
 * - a person answering starts the call's recording first when its workspace records calls, and call.recording.saved
 *   stores it (api/carriers/telnyx-recordings.ts, docs/features/recordings.md#telnyx).
 * Steps are commanded only while the call is dialing (not ended). Anything else is received and changes nothing.
 */
export async function receiveTelnyxWebhook(
  services: AppServices,
  req: Request,
  attemptId: string,
  webhook: TelnyxWebhook,
): Promise<{ received: true; applied: boolean }> {
  const connection = verifiedTelnyxConnectionOf(req);
  const call = await scriptCallOf(services, attemptId, connection.id);
  const { event_type: type, payload } = webhook.data;
  const state = decodeClientState(payload.client_state);
  if (state && state.attemptId !== attemptId) throw new Refusal(ErrorCode.unknown_call);
  // The call's recording is saved: the one webhook that does not name the call (docs/features/recordings.md#telnyx).
  if (type === TELNYX_RECORDING_SAVED)
    return receiveTelnyxRecordingSaved(services, connection, call, attemptId, webhook);
  const callControlId = telnyxCallControlId(webhook);
  const live = call.status === 'dialing';
  const step = (request: ScriptRequest) =>
    walkTelnyxStep(services, connection, call, attemptId, callControlId, request);
  // The human's leg a transfer dialed: its own call, never the lead's progress (docs: transfer_to_human).
  if (state?.step === 'human')
    return {
      received: true,
      applied: await telnyxHumanLegWebhook(services, connection, attemptId, {
        type,
        legCallControlId: callControlId,
        hangupCause: payload.hangup_cause,
        speakStatus: payload.status,
      }),
    };

  /** A person is on the line: the conversation on ConversationRelay (docs/features/conversation/relay.md#telnyx), or the script walk. */
  // The conversation on ConversationRelay (docs/features/conversation/relay.md#telnyx), or the script walk.
  const converse = async () => {
    // Recorded from before the conversation's first line, so that the disclosure and its recording notice are too.
    await startTelnyxRecording(services, connection, call, attemptId, callControlId);
    if (call.agent && callConversationEngine(services.conversationEngine, call.agent) === 'relay')
      await startTelnyxRelay(services, connection, call, attemptId, callControlId);
    else await step({ kind: 'answer' });
  };

  const answeredAt = type === 'call.hangup' ? await answeredAtOf(services, connection.provider, callControlId) : null;
  const event = callEventOfTelnyx(webhook, attemptId, answeredAt);
  if (event && call.direction === 'inbound') {
    // An inbound call (docs/features/carriers/inbound.md): no detection runs, the caller is a person, so the answer
    // starts the conversation; its end starts its call intelligence, as no workflow waits for it.
    const received = await receiveCallEvent(services, connection.provider, event, connection.id);
    if (type === 'call.answered' && live) await converse();
    if (type === 'call.hangup')
      await afterInboundEvent(services, {
        connectionId: connection.id,
        provider: connection.provider,
        providerCallId: callControlId,
      });
    return received;
  }
  if (event) return receiveCallEvent(services, connection.provider, event, connection.id);

  if (TELNYX_DETECTION_ENDED.has(type) || TELNYX_GREETING_ENDED.has(type)) {
    const detected = answeredByEventOfTelnyx(webhook, attemptId);
    const result = await applyAnsweredBy(poolSql(services.sql), connection.provider, detected, connection.id);
    if (!result.found) throw new Refusal(ErrorCode.unknown_call);
    if (live && TELNYX_GREETING_ENDED.has(type)) await step({ kind: 'voicemail' });
    else if (live && TELNYX_DETECTION_ENDED.has(type) && detected.answeredBy !== 'machine') await converse();
    return { received: true, applied: result.applied };
  }

  // The conversation is over (the engine's `end`, or its socket closed): the transfer it asked for, or the hang-up.
  if (type === TELNYX_CONVERSATION_ENDED)
    return {
      received: true,
      applied: live && (await telnyxConversationEnded(services, connection, attemptId, callControlId)),
    };

  const question = typeof state?.step === 'number' ? state.step : null;
  const asked = question !== null && question >= 1 && question <= (call.agent?.script.questions.length ?? 0);

  if (type === 'call.transcription') {
    const heard = payload.transcription_data;
    if (!live || !heard || !asked) return notApplied;
    // Words heard so far (an interim result): the lead has begun to answer, so the question's wait goes on from now,
    // as Twilio's Gather waits only for speech to begin.
    if (heard.is_final === false)
      return { received: true, applied: await armQuestionWait(services, call.id, question!) };
    const confidence = heard.confidence === undefined ? null : Math.min(1, Math.max(0, heard.confidence));
    return {
      received: true,
      applied: await step({ kind: 'step', step: question!, heard: { text: heard.transcript, confidence } }),
    };
  }

  // A question has been said: its wait for an answer begins (a question nobody answers: telnyx-question-waits.ts).
  if (type === 'call.speak.ended' && asked && live && payload.status !== 'call_hangup')
    return { received: true, applied: await armQuestionWait(services, call.id, question!) };

  if (type === 'call.speak.ended' && state?.step === 'end' && live) {
    await createTelnyxCalls(connection, { publicBaseUrl: services.publicBaseUrl! }).hangup(callControlId);
    return { received: true, applied: true };
  }
  return notApplied;
}

const notApplied = { received: true as const, applied: false };
