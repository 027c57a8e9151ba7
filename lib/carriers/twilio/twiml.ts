import {
  ANSWER_TIMEOUT_SECONDS,
  spokenRelayGreeting,
  scriptStepOf,
  speechHints,
  type ScriptCall,
  type ScriptRequest,
  type ScriptTurn,
} from '../../conversation/script-walk';
import { RELAY_ATTEMPT_PARAMETER } from './conversation-relay/frames';
import { stepWithinPaidTime } from '../paid-time';
import { twilioRelayVoiceOf, twilioSayVoiceOf } from './twilio-voices';
import { escapeXml } from '../../xml';
import { pronouncedLine, pronunciationsOf, type Pronunciations } from '../../dictionaries/pronunciations';

export { NO_ANSWER_TEXT, VOICEMAIL_STEP, type ScriptTurn } from '../../conversation/script-walk';

/**
 * What a call's TwiML is built from: the call's agent and lead (lib/conversation/script-walk.ts), and the public URL of
 * the call's TwiML route (its steps' URLs are under it). Read by api/carriers/twilio-callbacks.ts for the call the
 * request's URL names.
 */
export interface TwimlCall extends ScriptCall {
  /** PUBLIC_BASE_URL + .../calls/{attemptId}/twiml: a step's action is `${twimlUrl}/${step}`. */
  twimlUrl?: string;
}

/** Which document Twilio asks for: a step of the script walk (the answer, a Gather's action, the voicemail). */
export type TwimlRequest = ScriptRequest;

/** The Gather's settings: Twilio ends the answer after a pause it judges (auto), and waits 6 s for speech to begin. */
export const GATHER_TIMEOUT_SECONDS = ANSWER_TIMEOUT_SECONDS;
export const GATHER_SPEECH_TIMEOUT = 'auto';

/** Twilio takes at most 500 hints; a comma separates them, so a term's own commas become spaces. */
export const MAX_TWILIO_HINTS = 500;

const attributes = (values: Record<string, string | undefined>) =>
  Object.entries(values)
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([name, value]) => ` ${name}="${escapeXml(value!)}"`)
    .join('');

const document = (body: string) => `<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`;

/** The hints attribute: the dictionaries' terms, commas made spaces, each once, at most 500. */
export function twilioHints(terms: readonly string[]): string {
  return speechHints(terms, MAX_TWILIO_HINTS).join(', ');
}

/**
 * What a `<Say>` holds: the text, its dictionary pronunciations (lib/dictionaries/pronunciations.ts) as SSML
 * `<sub alias>` elements, which Twilio takes inside `<Say>` for its Amazon Polly voices (every voice of the table);
 * with Twilio's default voice (a voice the table does not know) the spoken forms replace the written ones as text.
 */
function sayContent(text: string, voice: { voice?: string }, pronunciations: Pronunciations): string {
  const line = pronouncedLine(text, pronunciations, voice.voice?.startsWith('Polly.') ?? false);
  return 'ssml' in line ? line.ssml : escapeXml(line.text);
}

/**
 * The TwiML Twilio obeys for one step of the script walk (lib/conversation/script-walk.ts, the seam), and the turns of
 * the transcript that step makes: the step's lines as `<Say>`, its question inside `<Gather input="speech">` whose
 * action is the next step (actionOnEmptyResult, so that silence reaches it too), or `<Hangup/>` after the lines.
 * Every `<Say>` has the agent's voice mapped to Twilio's (lib/carriers/twilio/twilio-voices.ts); a Gather listens in
 * the agent's language, with the agent's dictionaries as hints. `paidLeftMs`: a test call's paid time left (null: no
 * limit). Pure, as the walk is.
 */
export function twimlOfCall(
  call: TwimlCall,
  request: TwimlRequest = { kind: 'answer' },
  paidLeftMs: number | null = null,
): { twiml: string; turns: ScriptTurn[] } {
  const agent = call.agent;
  if (!agent) return { twiml: document('<Hangup/>'), turns: scriptStepOf(call, request).turns };
  // A test call's paid time (lib/carriers/paid-time.ts): a step that does not fit is the time-up line and the hang-up;
  // a question's Gather waits no longer than the time left. Not the voicemail step: a machine is not told.
  const { step, turns, lines, question, answerWaitSec } = stepWithinPaidTime(scriptStepOf(call, request), {
    leftMs: request.kind === 'voicemail' ? null : paidLeftMs,
    language: agent.language,
    answerWaitSec: GATHER_TIMEOUT_SECONDS,
    clipWait: true,
  });
  const voice = twilioSayVoiceOf(agent.voiceId, agent.language);
  const pronunciations = pronunciationsOf(agent.hints ?? []);
  const say = (text: string) =>
    text ? `<Say${attributes(voice)}>${sayContent(text, voice, pronunciations)}</Say>` : '';
  const body = lines.map(say).join('');
  if (question === null) return { twiml: document(`${body}<Hangup/>`), turns };
  const gather = attributes({
    input: 'speech',
    action: `${call.twimlUrl ?? ''}/${step + 1}`,
    method: 'POST',
    language: agent.language,
    hints: twilioHints(agent.hints ?? []) || undefined,
    timeout: String(answerWaitSec),
    speechTimeout: GATHER_SPEECH_TIMEOUT,
    actionOnEmptyResult: 'true',
  });
  return { twiml: document(`${body}<Gather${gather}>${say(question)}</Gather>`), turns };
}

/** What a call's ConversationRelay document needs besides its call: its socket's URL and its attempt. */
export interface RelayTwimlOptions {
  /** wss://.../calls/{attemptId}/relay (lib/carriers/twilio/twilio-urls.ts twilioRelayUrl). */
  relayUrl: string;
  attemptId: string;
  /** Said by Twilio as soon as the session starts, after the workspace's disclosure (if any): the agent's opening line. */
  welcomeGreeting: string;
  /** <Connect>'s action: Twilio asks it what to do once the conversation ends (a transfer's <Dial>, or hang up). */
  endedUrl: string;
}

/**
 * The answered call handed to ConversationRelay (docs/features/conversation/relay.md): `<Connect>` with
 * `<ConversationRelay>` opening the call's socket, the agent's language and dictionaries as hints (the agent's voice is
 * not mapped to ConversationRelay's voices yet: Twilio's default voice of the language speaks), the opening
 * line as the welcome greeting (after the workspace's disclosure, docs/features/compliance.md#disclosure), and the attempt as a `<Parameter>` (repeated in the setup message). When the session
 * ends the document ends, and Twilio hangs up. No agent: hang up at once.
 */
export function relayTwimlOfCall(call: ScriptCall, options: RelayTwimlOptions): string {
  const agent = call.agent;
  if (!agent) return document('<Hangup/>');
  const relay = attributes({
    url: options.relayUrl,
    welcomeGreeting: spokenRelayGreeting(call, options.welcomeGreeting) || undefined,
    language: agent.language,
    hints: twilioHints(agent.hints ?? []) || undefined,
    ...twilioRelayVoiceOf(agent.voiceId),
  });
  const parameter = attributes({ name: RELAY_ATTEMPT_PARAMETER, value: options.attemptId });
  const connect = attributes({ action: options.endedUrl, method: 'POST' });
  return document(
    `<Connect${connect}><ConversationRelay${relay}><Parameter${parameter}/></ConversationRelay></Connect>`,
  );
}

/**
 * A call handed to a human (docs/features/conversation/tools.md#transfer_to_human): <Dial> of the agent's transfer
 * number from the call's own caller number, ringing at most `timeoutSec`, whose action tells how it went. Cold: the
 * human hears the lead at once (the summary is in the transcript's tool turn). Warm (`whisperUrl`): the number as a
 * <Number url>, whose TwiML Twilio runs on the human's leg once they answer and before the two are connected
 * (Twilio's whisper): the summary (docs/features/conversation/tools.md#warm-transfer).
 */
export function transferTwiml(options: {
  transferNumber: string;
  callerId: string | null;
  timeoutSec: number;
  endedUrl: string;
  whisperUrl?: string;
}): string {
  const dial = attributes({
    action: options.endedUrl,
    method: 'POST',
    timeout: String(options.timeoutSec),
    callerId: options.callerId ?? undefined,
  });
  const number = escapeXml(options.transferNumber);
  const dialed = options.whisperUrl
    ? `<Number${attributes({ url: options.whisperUrl, method: 'POST' })}>${number}</Number>`
    : number;
  return document(`<Dial${dial}>${dialed}</Dial>`);
}

/** Words said, in the agent's voice, and nothing after: the whisper's document ends and Twilio connects the two. */
export function sayTwiml(text: string, voiceId: string, language: string): string {
  const voice = twilioSayVoiceOf(voiceId, language);
  return document(`<Say${attributes(voice)}>${escapeXml(text)}</Say>`);
}

/** Words said before hanging up (a transfer nobody answered), in the agent's voice. */
export function sayThenHangupTwiml(text: string, voiceId: string, language: string): string {
  const voice = twilioSayVoiceOf(voiceId, language);
  return document(`<Say${attributes(voice)}>${escapeXml(text)}</Say><Hangup/>`);
}

/** Hang up: a conversation over. */
export function hangupTwiml(): string {
  return document('<Hangup/>');
}
