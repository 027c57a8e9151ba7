import { speechHints, type ScriptCall, type ScriptStep } from '../../conversation/script-walk';
import { telnyxSpeakVoiceOf } from './telnyx-voices';
import { pronouncedLine, pronunciationsOf, type Pronunciations } from '../../dictionaries/pronunciations';

/** What a speak says and how: built here, sent by the adapter (lib/carriers/telnyx/telnyx-calls.ts). */
export interface TelnyxSpeak {
  payload: string;
  /** ssml: the payload is a `<speak>` document (a dictionary pronunciation in it); unset: text. */
  payloadType?: 'ssml';
  voice: string;
  language: string;
  commandId: string;
  clientState?: string;
}

/**
 * The agent's script walk on Call Control (docs/features/carriers/telnyx.md#the-script-walk-on-telnyx): a step of the walk
 * (lib/conversation/script-walk.ts) as the speak commands that say it. Call Control has no document for the call to obey:
 * the product commands each step as the webhooks tell what happened (a person answered, the lead's answer was
 * transcribed, the closing was said), and the client_state of each command says which step its webhooks belong to.
 */

/**
 * What a call's client_state says: its attempt, and for the walk's commands the step their webhooks belong to (a
 * question's number: the transcription after it is that question's answer; `end`: hang up once said; `human`: the
 * webhooks of the human's leg a transfer dialed, docs/features/conversation/tools.md#transfer_to_human). The dial's is
 * base64 of the attempt id alone; a command's is base64 of `{"a": attemptId, "s": step}` (Telnyx carries a command's
 * client_state on its own webhooks and every later one).
 */
export interface TelnyxClientState {
  attemptId: string;
  step?: number | 'end' | 'human';
}

export function encodeClientState(state: TelnyxClientState): string {
  const text = state.step === undefined ? state.attemptId : JSON.stringify({ a: state.attemptId, s: state.step });
  return Buffer.from(text, 'utf8').toString('base64');
}

/** The client_state of a webhook read back; null when it is not one the product gave. */
export function decodeClientState(clientState: string | null | undefined): TelnyxClientState | null {
  if (!clientState) return null;
  const text = Buffer.from(clientState, 'base64').toString('utf8');
  if (text.startsWith('{')) {
    try {
      const { a, s } = JSON.parse(text) as { a?: unknown; s?: unknown };
      if (
        typeof a === 'string' &&
        (s === 'end' || s === 'human' || (typeof s === 'number' && Number.isInteger(s) && s >= 0))
      )
        return { attemptId: a, step: s };
    } catch {
      // Not the product's JSON: read as an attempt id below.
    }
  }
  return text ? { attemptId: text } : null;
}

/** Telnyx's Google engine takes its hints as a list; the same limit as Twilio's. */
export const MAX_TELNYX_HINTS = 500;

/** The hints a call listens with: the agent's dictionaries' terms (as the Twilio Gather's hints are made). */
export const telnyxHints = (terms: readonly string[]) => speechHints(terms, MAX_TELNYX_HINTS);

/**
 * A speak's payload with the agent's dictionary pronunciations (lib/dictionaries/pronunciations.ts): SSML
 * (payload_type ssml, `<sub alias>` in a `<speak>` document) for Telnyx's Amazon Polly voices, which read Polly's SSML;
 * the spoken forms put in the text for Telnyx's default voice; plain text when no term occurs.
 */
export function telnyxPayloadOf(
  text: string,
  voice: string,
  pronunciations: Pronunciations,
): Pick<TelnyxSpeak, 'payload' | 'payloadType'> {
  const line = pronouncedLine(text, pronunciations, voice.startsWith('AWS.Polly.'));
  return 'ssml' in line ? { payload: `<speak>${line.ssml}</speak>`, payloadType: 'ssml' } : { payload: line.text };
}

/**
 * The speaks of one step, in order: its lines, then its question (client_state: the question's number, so that the
 * transcription after it is stored as its answer), or, when the step ends the call, its last line marked `end` (its
 * call.speak.ended hangs up: a hangup sent at once would cut the closing off). `hangUpNow`: a step that ends the call
 * and says nothing (no agent, no voicemail message). Each speak's command_id is its step and place, so a step commanded
 * twice (a webhook delivered again) is said once.
 */
export function telnyxSpeaksOf(
  call: ScriptCall,
  attemptId: string,
  { step, lines, question }: ScriptStep,
): { speaks: TelnyxSpeak[]; hangUpNow: boolean } {
  const agent = call.agent;
  if (!agent) return { speaks: [], hangUpNow: true };
  const voice = telnyxSpeakVoiceOf(agent.voiceId, agent.language);
  const pronunciations = pronunciationsOf(agent.hints ?? []);
  const texts = question === null ? lines : [...lines, question];
  const speaks = texts.map((text, index): TelnyxSpeak => ({
    ...telnyxPayloadOf(text, voice.voice, pronunciations),
    ...voice,
    commandId: `speak:${step}:${index}`,
  }));
  const last = speaks.at(-1);
  if (question !== null) last!.clientState = encodeClientState({ attemptId, step: step + 1 });
  else if (last) last.clientState = encodeClientState({ attemptId, step: 'end' });
  return { speaks, hangUpNow: speaks.length === 0 };
}
