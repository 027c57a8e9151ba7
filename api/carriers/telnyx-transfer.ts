import { createTelnyxCalls, TelnyxRequestError } from '../../lib/carriers/telnyx/telnyx-calls';
import type { TelnyxConnection } from '../../lib/carriers/telnyx/telnyx-client';
import { encodeClientState } from '../../lib/carriers/telnyx/telnyx-script';
import { telnyxWebhookUrl } from '../../lib/carriers/telnyx/telnyx-urls';
import { telnyxSpeakVoiceOf } from '../../lib/carriers/telnyx/telnyx-voices';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';
import {
  markConversationOutcome,
  settleTransfer,
  transferCallOf,
  type TransferCallRow,
} from '../conversation/conversation-tool-store';
import { nobodyAnsweredLine, TRANSFER_RING_SECONDS, whisperLine } from '../conversation/transfer';

/**
 * transfer_to_human on Telnyx (docs/features/conversation/tools.md#transfer_to_human). Call Control keeps the call up
 * when its ConversationRelay session ends and says so with call.conversation.ended; the product then transfers it to
 * the agent's transfer number when the tool asked for one (Call.transferRequestedAt), else hangs it up. The human's
 * leg rings TRANSFER_RING_SECONDS, and its webhooks come to the call's webhook URL marked `human` (client_state).
 * - cold: actions/transfer dials the human and bridges the lead to them when they answer: answered, the call ends
 *   transferred;
 * - warm (docs/features/conversation/tools.md#warm-transfer): the human is dialed as a call of its own (POST /calls);
 *   on its call.answered the summary is spoken to that leg alone; on that speak's call.speak.ended the lead is bridged
 *   to it (actions/bridge): the call ends transferred;
 * - either way, a human's leg that hangs up before that (busy, no answer, failed; warm: also a hang-up during the
 *   summary) leaves the lead's call on: the lead hears that nobody could take the call, the call ends
 *   callback_requested with no time of its own, and the ladder's next rung calls again, as Twilio's <Dial> action does
 *   (twilio-transfer.ts).
 * Telnyx delivers a webhook again until it is answered: each command has its command_id (a second dial, speak or
 * bridge is ignored by Telnyx), and how the transfer went is decided once (Call.transferStatus, settleTransfer).
 */

async function callOf(services: AppServices, connection: TelnyxConnection, attemptId: string) {
  const call = await transferCallOf(poolSql(services.sql), attemptId, connection.id);
  if (!call) throw new Refusal(ErrorCode.unknown_call);
  return call;
}

const humanState = (attemptId: string) => encodeClientState({ attemptId, step: 'human' });

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
  if (!call.transferRequestedAt || !call.transferNumber) {
    await calls.hangup(callControlId);
    return true;
  }
  const webhookUrl = telnyxWebhookUrl(publicBaseUrl, { connectionId: connection.id, attemptId });
  if (call.transferMode !== 'warm')
    return calls.transfer(callControlId, {
      to: call.transferNumber,
      from: call.fromNumber,
      timeoutSecs: TRANSFER_RING_SECONDS,
      webhookUrl,
      targetLegClientState: humanState(attemptId),
    });
  try {
    await calls.dialHuman({
      attemptId,
      leadCallControlId: callControlId,
      to: call.transferNumber,
      from: call.fromNumber ?? call.transferNumber,
      timeoutSecs: TRANSFER_RING_SECONDS,
      webhookUrl,
      clientState: humanState(attemptId),
    });
  } catch (error) {
    // Telnyx refused the dial itself (the number, the connection): nobody can take the call.
    if (!(error instanceof TelnyxRequestError) || error.status === undefined || error.status >= 500) throw error;
    return nobodyAnswered(services, connection, attemptId, call);
  }
  return true;
}

/** The transfer went unanswered: said to the lead (`end`: its call.speak.ended hangs up), decided once. */
async function nobodyAnswered(
  services: AppServices,
  connection: TelnyxConnection,
  attemptId: string,
  call: TransferCallRow,
): Promise<boolean> {
  const sql = poolSql(services.sql);
  if (!call.providerCallId || !(await settleTransfer(sql, call.id, 'unanswered'))) return false;
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

/** The human answered: the transfer is done (cold: Telnyx has bridged them; warm: after actions/bridge). */
async function transferred(services: AppServices, call: TransferCallRow): Promise<boolean> {
  const sql = poolSql(services.sql);
  await settleTransfer(sql, call.id, 'answered');
  return (await markConversationOutcome(sql, call.id, 'transferred')).marked;
}

/** One webhook of the human's leg a transfer dialed (client_state `human`), as its leg's call. */
export interface HumanLegWebhook {
  type: string;
  /** The human's leg's call_control_id. */
  legCallControlId: string;
  hangupCause?: string;
  /** call.speak.ended's: completed, or call_hangup. */
  speakStatus?: string;
}

/**
 * A webhook of the human's leg. Cold: call.answered, the call is transferred (a hang-up with normal_clearing is of a
 * leg that was answered, whose call.answered may come late: transferred too); any other call.hangup, the fallback
 * line on the lead's call. Warm: call.answered, the summary spoken to the human's leg; its call.speak.ended, the
 * bridge; a call.hangup before the bridge, the fallback line. Anything else, and anything after the lead's call ended
 * or after the transfer was decided, changes nothing (a warm leg answered after the lead hung up is hung up). Answers
 * whether it changed anything.
 */
export async function telnyxHumanLegWebhook(
  services: AppServices,
  connection: TelnyxConnection,
  attemptId: string,
  webhook: HumanLegWebhook,
): Promise<boolean> {
  const call = await callOf(services, connection, attemptId);
  const { type } = webhook;
  const calls = createTelnyxCalls(connection, { publicBaseUrl: services.publicBaseUrl! });
  const warm = call.transferMode === 'warm';
  if (call.status !== 'dialing' || call.transferStatus !== null || call.conversationOutcome === 'transferred') {
    if (warm && type === 'call.answered' && call.status !== 'dialing') await calls.hangup(webhook.legCallControlId);
    return false;
  }
  if (!warm) {
    const answered = type === 'call.answered' || (type === 'call.hangup' && webhook.hangupCause === 'normal_clearing');
    if (answered) return transferred(services, call);
    return type === 'call.hangup' && nobodyAnswered(services, connection, attemptId, call);
  }
  if (type === 'call.answered') {
    const language = call.language ?? 'en';
    return calls.speak(webhook.legCallControlId, {
      payload: whisperLine(call.transferSummary, language),
      ...telnyxSpeakVoiceOf(call.voiceId ?? '', language),
      commandId: 'speak:whisper',
      clientState: humanState(attemptId),
    });
  }
  if (type === 'call.speak.ended' && webhook.speakStatus !== 'call_hangup' && call.providerCallId) {
    if (!(await calls.bridge(call.providerCallId, webhook.legCallControlId))) return false;
    return transferred(services, call);
  }
  return type === 'call.hangup' && nobodyAnswered(services, connection, attemptId, call);
}
