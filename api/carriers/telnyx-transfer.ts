import { createTelnyxCalls } from '../../lib/carriers/telnyx/telnyx-calls';
import type { TelnyxConnection } from '../../lib/carriers/telnyx/telnyx-client';
import { encodeClientState } from '../../lib/carriers/telnyx/telnyx-script';
import { telnyxWebhookUrl } from '../../lib/carriers/telnyx/telnyx-urls';
import { telnyxSpeakVoiceOf } from '../../lib/carriers/telnyx/telnyx-voices';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';
import { markConversationOutcome, transferCallOf } from '../conversation/conversation-tool-store';
import { nobodyAnsweredLine, TRANSFER_RING_SECONDS } from '../conversation/transfer';

/**
 * transfer_to_human on Telnyx (docs/features/conversation/tools.md#transfer_to_human). Call Control keeps the call up
 * when its ConversationRelay session ends and says so with call.conversation.ended; the product then transfers it to
 * the agent's transfer number when the tool asked for one (Call.transferRequestedAt), else hangs it up. The transfer
 * dials the human, ringing TRANSFER_RING_SECONDS, and bridges the lead to them when they answer; the human's leg's
 * webhooks come to the call's webhook URL marked `human` (target_leg_client_state): answered, the call ends
 * transferred; hung up unanswered (busy, no answer, failed: Telnyx leaves the lead's call on), the lead hears that
 * nobody could take the call, the call ends callback_requested with no time of its own, and the ladder's next rung
 * calls again: what Twilio's <Dial> action does (twilio-transfer.ts).
 */

async function callOf(services: AppServices, connection: TelnyxConnection, attemptId: string) {
  const call = await transferCallOf(poolSql(services.sql), attemptId, connection.id);
  if (!call) throw new Refusal(ErrorCode.unknown_call);
  return call;
}

/** call.conversation.ended: the transfer when its tool asked for one, else the hang-up. Answers whether it commanded. */
export async function telnyxConversationEnded(
  services: AppServices,
  connection: TelnyxConnection,
  attemptId: string,
  callControlId: string,
): Promise<boolean> {
  const call = await callOf(services, connection, attemptId);
  if (call.status !== 'dialing') return false;
  const publicBaseUrl = services.publicBaseUrl!;
  const calls = createTelnyxCalls(connection, { publicBaseUrl });
  if (call.transferRequestedAt && call.transferNumber)
    return calls.transfer(callControlId, {
      to: call.transferNumber,
      from: call.fromNumber,
      timeoutSecs: TRANSFER_RING_SECONDS,
      webhookUrl: telnyxWebhookUrl(publicBaseUrl, { connectionId: connection.id, attemptId }),
      targetLegClientState: encodeClientState({ attemptId, step: 'human' }),
    });
  await calls.hangup(callControlId);
  return true;
}

/**
 * A webhook of the human's leg: call.answered, the call is transferred; call.hangup of a leg nobody answered, the
 * fallback line on the lead's call (`end`: its call.speak.ended hangs up). A hang-up with normal_clearing is of a leg
 * that was answered (its call.answered may come late, or not again): transferred too. Anything else, and anything after
 * the lead's call ended, changes nothing. Answers whether it changed anything.
 */
export async function telnyxHumanLegWebhook(
  services: AppServices,
  connection: TelnyxConnection,
  attemptId: string,
  type: string,
  hangupCause: string | undefined,
): Promise<boolean> {
  const call = await callOf(services, connection, attemptId);
  if (call.status !== 'dialing' || call.conversationOutcome === 'transferred') return false;
  const sql = poolSql(services.sql);
  const answered = type === 'call.answered' || (type === 'call.hangup' && hangupCause === 'normal_clearing');
  if (answered) return (await markConversationOutcome(sql, call.id, 'transferred')).marked;
  if (type !== 'call.hangup' || !call.providerCallId) return false;
  await markConversationOutcome(sql, call.id, 'callback_requested', { callbackAt: null });
  const language = call.language ?? 'en';
  await createTelnyxCalls(connection, { publicBaseUrl: services.publicBaseUrl! }).speak(call.providerCallId, {
    payload: nobodyAnsweredLine(language),
    ...telnyxSpeakVoiceOf(call.voiceId ?? '', language),
    commandId: 'speak:transfer',
    clientState: encodeClientState({ attemptId, step: 'end' }),
  });
  return true;
}
