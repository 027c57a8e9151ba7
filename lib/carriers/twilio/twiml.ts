import { filled } from '../../calls/simulated-conversation';
import { twilioSayVoiceOf } from './twilio-voices';

/**
 * What a call's TwiML is built from: the call's agent (null when its campaign names none), its lead, and the public
 * URL of the call's TwiML route (its steps' URLs are under it). Read by api/carriers/twilio-callbacks.ts for the call
 * the request's URL names.
 */
export interface TwimlCall {
  agent: {
    language: string;
    voiceId: string;
    script: { openingLine: string; questions: string[]; closing: string };
    /** Left on an answering machine after its beep; null or absent: none. */
    voicemailMessage?: string | null;
    /** Speech-recognition hints: the terms of the agent's dictionaries, in order. */
    hints?: string[];
  } | null;
  lead: { name: string | null; fields: Record<string, unknown> };
  /** PUBLIC_BASE_URL + .../calls/{attemptId}/twiml: a step's action is `${twimlUrl}/${step}`. */
  twimlUrl?: string;
}

/**
 * Which document Twilio asks for:
 * - `answer`: the call was answered (the dial's Url): the opening line and the first question;
 * - `step`: the action of question `step`'s Gather, with what the lead said (`heard`: SpeechResult and Confidence;
 *   null when the Gather timed out with nothing heard): the next question, or the closing;
 * - `voicemail`: a machine's greeting has ended (AnsweredBy machine_end_*): the voicemail message, then hang up.
 */
export type TwimlRequest =
  | { kind: 'answer' }
  | { kind: 'step'; step: number; heard: { text: string; confidence: number | null } | null }
  | { kind: 'voicemail' };

/** A turn of the transcript this document makes: what the lead said before it, and what the agent says in it. */
export interface ScriptTurn {
  /** The script's step (TwimlRequest: 0 the answer, n the answer to question n, VOICEMAIL_STEP the message). */
  step: number;
  /** Its order within the step: 0 the lead's answer, then the agent's lines. */
  part: number;
  speaker: 'agent' | 'lead';
  text: string;
  confidence: number | null;
}

/** The step the voicemail message is stored under: after every question's (at most 50). */
export const VOICEMAIL_STEP = 1000;

/** What the transcript says for a question the lead did not answer (the Gather's timeout, nothing heard). */
export const NO_ANSWER_TEXT = '(no answer)';

/** The Gather's settings: Twilio ends the answer after a pause it judges (auto), and waits 6 s for speech to begin. */
export const GATHER_TIMEOUT_SECONDS = 6;
export const GATHER_SPEECH_TIMEOUT = 'auto';

/** Twilio takes at most 500 hints; a comma separates them, so a term's own commas become spaces. */
export const MAX_TWILIO_HINTS = 500;

const escapeXml = (text: string) =>
  text.replace(/[<>&'"]/g, (char) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[char]!);

const attributes = (values: Record<string, string | undefined>) =>
  Object.entries(values)
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([name, value]) => ` ${name}="${escapeXml(value!)}"`)
    .join('');

const document = (body: string) => `<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`;

/** The hints attribute: the dictionaries' terms, commas made spaces, each once, at most 500. */
export function twilioHints(terms: readonly string[]): string {
  const seen = new Set<string>();
  for (const term of terms) {
    const hint = term.replace(/,/g, ' ').replace(/\s+/g, ' ').trim();
    if (hint) seen.add(hint);
    if (seen.size === MAX_TWILIO_HINTS) break;
  }
  return [...seen].join(', ');
}

/**
 * THE SEAM: the TwiML Twilio obeys for one step of the call (docs/features/carriers.md#the-script-walk), and the turns
 * of the transcript that step makes. The agent's script walk:
 * - answered: `<Say>` the opening line, then the first question asked inside `<Gather input="speech">` whose action
 *   is step 1 (no questions: the closing and `<Hangup/>`);
 * - step n: what the lead answered question n (its SpeechResult and Confidence; `(no answer)` when the Gather heard
 *   nothing: actionOnEmptyResult asks for the action all the same), then question n + 1 the same way, or after the
 *   last one the closing and `<Hangup/>`;
 * - voicemail: the agent's voicemail message, then `<Hangup/>` (no message: `<Hangup/>` alone).
 * Every `<Say>` has the agent's voice mapped to Twilio's (lib/carriers/twilio/twilio-voices.ts); a Gather listens in
 * the agent's language, with the agent's dictionaries as hints. The lead's `{{fields}}` are filled. No agent: hang up.
 * Pure: no I/O, the same call and request give the same document and turns (a replayed request repeats them, and the
 * turns are stored once per call, step and part). A free-form conversation with a language model replaces the
 * questions' walk here, as a step's document made from what was heard.
 */
export function twimlOfCall(
  call: TwimlCall,
  request: TwimlRequest = { kind: 'answer' },
): { twiml: string; turns: ScriptTurn[] } {
  const agent = call.agent;
  if (!agent) return { twiml: document('<Hangup/>'), turns: [] };
  const voice = twilioSayVoiceOf(agent.voiceId, agent.language);
  const fill = (text: string) => filled(text, call.lead);
  const say = (text: string) => (text ? `<Say${attributes(voice)}>${escapeXml(text)}</Say>` : '');
  const turns: ScriptTurn[] = [];
  const step = request.kind === 'answer' ? 0 : request.kind === 'step' ? request.step : VOICEMAIL_STEP;
  const agentSays = (text: string) => {
    if (text) turns.push({ step, part: turns.length + 1, speaker: 'agent', text, confidence: null });
    return say(text);
  };

  if (request.kind === 'voicemail') {
    const message = agent.voicemailMessage ? fill(agent.voicemailMessage) : '';
    return { twiml: document(`${agentSays(message)}<Hangup/>`), turns };
  }

  let body = '';
  if (request.kind === 'answer') body += agentSays(fill(agent.script.openingLine));
  else
    turns.push({
      step,
      part: 0,
      speaker: 'lead',
      text: request.heard?.text.trim() || NO_ANSWER_TEXT,
      confidence: request.heard?.text.trim() ? request.heard.confidence : null,
    });
  const question = agent.script.questions[step];
  if (question !== undefined) {
    const gather = attributes({
      input: 'speech',
      action: `${call.twimlUrl ?? ''}/${step + 1}`,
      method: 'POST',
      language: agent.language,
      hints: twilioHints(agent.hints ?? []) || undefined,
      timeout: String(GATHER_TIMEOUT_SECONDS),
      speechTimeout: GATHER_SPEECH_TIMEOUT,
      actionOnEmptyResult: 'true',
    });
    body += `<Gather${gather}>${agentSays(fill(question))}</Gather>`;
    return { twiml: document(body), turns };
  }
  body += `${agentSays(fill(agent.script.closing))}<Hangup/>`;
  return { twiml: document(body), turns };
}
