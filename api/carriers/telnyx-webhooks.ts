import type { Request } from 'express';
import { applyAnsweredBy } from '../../lib/calls/call-end';
import { openedConnectionsOf, verifiedConnection } from '../../lib/carriers/opened-connections';
import { scriptStepOf, type ScriptRequest } from '../../lib/carriers/script-walk';
import { createTelnyxCalls } from '../../lib/carriers/telnyx/telnyx-calls';
import { telnyxClientOf, type TelnyxConnection } from '../../lib/carriers/telnyx/telnyx-client';
import { decodeClientState, telnyxHints, telnyxSpeaksOf } from '../../lib/carriers/telnyx/telnyx-script';
import {
  answeredByEventOfTelnyx,
  callEventOfTelnyx,
  TELNYX_DETECTION_ENDED,
  TELNYX_GREETING_ENDED,
  type TelnyxWebhook,
} from '../../lib/carriers/telnyx/telnyx-webhooks';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';
import { receiveCallEvent } from '../calls/telephony-events';
import { rawBodyOf } from '../http/register-routes';
import { scriptCallOf, scriptCallOfRow, storeScriptTurns, type ScriptCallRow } from './script-calls';

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

/**
 * One step of the agent's script walk on the call (lib/carriers/script-walk.ts): its turns stored once per call, step
 * and part (the voicemail message marking the call voicemailLeftAt), then its commands through the connection that
 * signed the webhook: transcription started with the first question (hints from the agent's dictionaries), each line
 * and question spoken (command_ids per step and place: a step commanded again is said once), or the hang-up when the
 * step says nothing and ends the call. A command Telnyx refuses because the call has ended is dropped; any other
 * failure fails the webhook (5xx), so that Telnyx's retry commands the step again. Answers whether turns were stored.
 */
async function walkStep(
  services: AppServices,
  connection: TelnyxConnection,
  call: ScriptCallRow,
  attemptId: string,
  callControlId: string,
  request: ScriptRequest,
): Promise<boolean> {
  const scriptCall = scriptCallOfRow(call);
  const step = scriptStepOf(scriptCall, request);
  const stored = await storeScriptTurns(
    services,
    call.id,
    step.turns,
    request.kind === 'voicemail' && step.turns.length > 0,
  );
  const calls = createTelnyxCalls(connection, { publicBaseUrl: services.publicBaseUrl! });
  const agent = scriptCall.agent;
  if (agent && request.kind === 'answer' && step.question !== null)
    await calls.startTranscription(callControlId, { language: agent.language, hints: telnyxHints(agent.hints ?? []) });
  const { speaks, hangUpNow } = telnyxSpeaksOf(scriptCall, attemptId, step);
  for (const speak of speaks) if (!(await calls.speak(callControlId, speak))) return stored;
  if (hangUpNow) await calls.hangup(callControlId);
  return stored;
}

/** When the call was answered, by its call.answered event (recorded once per call): the talk time's start. */
async function answeredAtOf(services: AppServices, provider: string, callControlId: string): Promise<Date | null> {
  const [row] = await poolSql(services.sql)<{ at: Date }>(
    {
      name: 'telnyx_call_answered_at',
      text: `SELECT ("occurredAt" AT TIME ZONE 'UTC') AS at FROM "CallEvent" WHERE provider = $1 AND "eventId" = $2`,
    },
    provider,
    `${callControlId}:call.answered`,
  );
  return row?.at ?? null;
}

/**
 * A Call Control webhook of the call the URL names (docs/features/carriers.md#telnyx-webhooks), once its signature is
 * verified and the call is known to be placed through that very connection (404 unknown_call otherwise, and for a
 * client_state naming another attempt):
 * - call.initiated, call.answered, call.hangup: the product's carrier event (api/calls/telephony-events.ts), once per
 *   call and event type, only forward, the end signalling the call's workflow;
 * - detection ended: who answered (once per call); a person (or not sure) starts the script walk;
 * - a machine's greeting ended: a machine; the voicemail message is said, then the call hung up (no message: hung up);
 * - call.transcription (final): the answer to the question its client_state names, and the next step;
 * - call.speak.ended of the step's last line when it ends the call: the hang-up.
 * Steps are commanded only while the call is dialing (not ended). Anything else is received and changes nothing.
 */
export async function receiveTelnyxWebhook(
  services: AppServices,
  req: Request,
  attemptId: string,
  webhook: TelnyxWebhook,
): Promise<{ received: true; applied: boolean }> {
  const connection = verified.get(req);
  // assertSignedByTelnyx runs before the handler: a request without it never reaches here.
  if (!connection) throw new Refusal(ErrorCode.invalid_signature);
  const call = await scriptCallOf(services, attemptId, connection.id);
  const { event_type: type, payload } = webhook.data;
  const state = decodeClientState(payload.client_state);
  if (state && state.attemptId !== attemptId) throw new Refusal(ErrorCode.unknown_call);
  const callControlId = payload.call_control_id;
  const live = call.status === 'dialing';
  const step = (request: ScriptRequest) => walkStep(services, connection, call, attemptId, callControlId, request);

  const answeredAt = type === 'call.hangup' ? await answeredAtOf(services, connection.provider, callControlId) : null;
  const event = callEventOfTelnyx(webhook, attemptId, answeredAt);
  if (event) return receiveCallEvent(services, connection.provider, event, connection.id);

  if (TELNYX_DETECTION_ENDED.has(type) || TELNYX_GREETING_ENDED.has(type)) {
    const detected = answeredByEventOfTelnyx(webhook, attemptId);
    const result = await applyAnsweredBy(poolSql(services.sql), connection.provider, detected, connection.id);
    if (!result.found) throw new Refusal(ErrorCode.unknown_call);
    if (live && TELNYX_GREETING_ENDED.has(type)) await step({ kind: 'voicemail' });
    else if (live && TELNYX_DETECTION_ENDED.has(type) && detected.answeredBy !== 'machine')
      await step({ kind: 'answer' });
    return { received: true, applied: result.applied };
  }

  if (type === 'call.transcription') {
    const heard = payload.transcription_data;
    const question = state?.step;
    const questions = call.agent?.script.questions.length ?? 0;
    if (!live || !heard || heard.is_final === false || typeof question !== 'number') return notApplied;
    if (question < 1 || question > questions) return notApplied;
    const confidence = heard.confidence === undefined ? null : Math.min(1, Math.max(0, heard.confidence));
    return {
      received: true,
      applied: await step({ kind: 'step', step: question, heard: { text: heard.transcript, confidence } }),
    };
  }

  if (type === 'call.speak.ended' && state?.step === 'end' && live) {
    await createTelnyxCalls(connection, { publicBaseUrl: services.publicBaseUrl! }).hangup(callControlId);
    return { received: true, applied: true };
  }
  return notApplied;
}

const notApplied = { received: true as const, applied: false };
