import { openedConnectionsOf } from '../../lib/carrier-connections/opened-connections';
import { stepWithinPaidTime } from '../../lib/carriers/paid-time';
import {
  ANSWER_TIMEOUT_SECONDS,
  spokenRelayGreeting,
  scriptStepOf,
  type ScriptRequest,
} from '../../lib/conversation/script-walk';
import { createTelnyxCalls } from '../../lib/carriers/telnyx/telnyx-calls';
import type { TelnyxConnection } from '../../lib/carriers/telnyx/telnyx-client';
import { telnyxHints, telnyxSpeaksOf } from '../../lib/carriers/telnyx/telnyx-script';
import { telnyxRelayUrl } from '../../lib/carriers/telnyx/telnyx-urls';
import { telnyxSpeakVoiceOf } from '../../lib/carriers/telnyx/telnyx-voices';
import { scriptGreeting } from '../../lib/conversation/script-engine';
import type { AppServices } from '../app-services';
import { endWalkOnOptOut, minuteScaleOf, paidTimeLeftMs, scriptCallOfRow, storeScriptTurns } from './script-calls';
import type { ScriptCallRow } from './carrier-call-store';

/**
 * The live Telnyx connection of that id (a `telnyx` or `telnyx-twin` one), opened with the key ring, as this process
 * keeps it (lib/carrier-connections/opened-connections.ts); null when it is unknown, removed, another carrier's, or the API has no
 * key ring or PUBLIC_BASE_URL.
 */
export async function openTelnyxConnection(services: AppServices, id: string): Promise<TelnyxConnection | null> {
  const connection =
    services.carrierKeyring && services.publicBaseUrl
      ? (await openedConnectionsOf(services.db, services.carrierKeyring).get(id)).connection
      : null;
  return connection && (connection.provider === 'telnyx' || connection.provider === 'telnyx-twin')
    ? (connection as TelnyxConnection)
    : null;
}

/**
 * The wait for an answer (api/carriers/telnyx-question-waits.ts), unless the services say otherwise (tests on a fast
 * twin): Twilio's Gather timeout.
 */
export const answerTimeoutMsOf = (services: AppServices) =>
  services.telnyxAnswerTimeoutMs ?? ANSWER_TIMEOUT_SECONDS * 1_000;

/**
 * One step of the agent's script walk on the call (lib/conversation/script-walk.ts): its turns stored once per call, step
 * and part (the voicemail message marking the call voicemailLeftAt), then its commands through the connection:
 * transcription started with the first question (hints from the agent's dictionaries), each line and question spoken
 * (command_ids per step and place: a step commanded again is said once), or the hang-up when the step says nothing and
 * ends the call; a test call's step that its paid time left cannot hold is the time-up line instead. A command Telnyx
 * refuses because the call has ended is dropped; any other failure throws, so that the step is commanded again
 * (Telnyx's retry of the webhook, or the question sweep's next pass). Answers whether turns were stored.
 */
export async function walkTelnyxStep(
  services: AppServices,
  connection: TelnyxConnection,
  call: ScriptCallRow,
  attemptId: string,
  callControlId: string,
  request: ScriptRequest,
): Promise<boolean> {
  const scriptCall = scriptCallOfRow(call);
  // A test call's paid time (lib/carriers/paid-time.ts): a step that does not fit, its question's whole wait included
  // (armed later, by the question sweep), is the time-up line, then the hang-up once it is said. Not the voicemail.
  const step = stepWithinPaidTime(scriptStepOf(scriptCall, request), {
    leftMs: request.kind === 'voicemail' ? null : await paidTimeLeftMs(services, call),
    language: scriptCall.agent?.language ?? 'en',
    answerWaitSec: answerTimeoutMsOf(services) / minuteScaleOf(services) / 1_000,
    clipWait: false,
  });
  const stored = await storeScriptTurns(
    services,
    call.id,
    step.turns,
    request.kind === 'voicemail' && step.turns.length > 0,
  );
  await endWalkOnOptOut(services, call, request);
  const calls = createTelnyxCalls(connection, { publicBaseUrl: services.publicBaseUrl! });
  const agent = scriptCall.agent;
  if (agent && request.kind === 'answer' && step.question !== null)
    await calls.startTranscription(callControlId, { language: agent.language, hints: telnyxHints(agent.hints ?? []) });
  const { speaks, hangUpNow } = telnyxSpeaksOf(scriptCall, attemptId, step);
  for (const speak of speaks) if (!(await calls.speak(callControlId, speak))) return stored;
  if (hangUpNow) await calls.hangup(callControlId);
  return stored;
}

/**
 * A person answered a call of an agent on the dialogue engine (docs/features/conversation/relay.md#telnyx): the
 * call is handed to ConversationRelay (conversation_relay_start, once per call by its command_id), with the disclosure
 * and the opening line as its greeting, the agent's voice and language, its dictionaries' terms as hints, and the URL
 * of the call's socket with its token; the conversation then runs on that socket (api/carriers/relay-socket.ts), which
 * stores its turns. Answers whether the call was still on.
 */
export async function startTelnyxRelay(
  services: AppServices,
  connection: TelnyxConnection,
  call: ScriptCallRow,
  attemptId: string,
  callControlId: string,
): Promise<boolean> {
  const scriptCall = scriptCallOfRow(call);
  const agent = scriptCall.agent!;
  const publicBaseUrl = services.publicBaseUrl!;
  return createTelnyxCalls(connection, { publicBaseUrl }).startConversationRelay(callControlId, {
    url: telnyxRelayUrl(publicBaseUrl, { connectionId: connection.id, attemptId }, connection.secrets.apiKey),
    greeting: spokenRelayGreeting(scriptCall, scriptGreeting(scriptCall)),
    voice: telnyxSpeakVoiceOf(agent.voiceId, agent.language).voice,
    language: agent.language,
    hints: telnyxHints(agent.hints ?? []),
    attemptId,
  });
}
