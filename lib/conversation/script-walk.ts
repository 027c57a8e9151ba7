import { parseTerm, pronunciationsOf, spokenPiecesOf, spokenTextOf } from '../dictionaries/pronunciations';
import { filled } from '../lead-placeholders';
import { saysOptOut } from './intents';
import { ruleLanguageOf, type RuleLanguage } from './utterance';

/**
 * The agent's script walk as both carriers run it (docs/features/carriers/twilio.md#the-script-walk): what the agent says at
 * each step of a call and the transcript turns the step makes. Twilio renders a step as TwiML
 * (lib/carriers/twilio/twiml.ts), Telnyx as Call Control commands (lib/carriers/telnyx/telnyx-script.ts); the walk
 * itself, its steps, its turns and its "(no answer)", is this one.
 */
export interface ScriptCall {
  agent: {
    language: string;
    voiceId: string;
    script: { openingLine: string; questions: string[]; closing: string };
    /** Left on an answering machine after its beep; null or absent: none. */
    voicemailMessage?: string | null;
    /** Speech-recognition hints: the terms of the agent's dictionaries, in order. */
    hints?: string[];
    /** Where transfer_to_human hands a call; null or absent: the agent cannot transfer (a dialogue engine offers a callback). */
    transferNumber?: string | null;
  } | null;
  lead: { name: string | null; fields: Record<string, unknown> };
  /**
   * The workspace's disclosure (docs/features/compliance.md#disclosure): said first, before the opening line, as
   * step 0's first agent turn. Null or absent: none.
   */
  disclosure?: string | null;
}

/** The disclosure said before the agent's first message ('' when none): not filled, said as written. */
export function disclosureOf(call: ScriptCall): string {
  return call.agent ? (call.disclosure?.trim() ?? '') : '';
}

/**
 * What ConversationRelay says first, on either carrier (Twilio's welcomeGreeting, Telnyx's greeting), and what a web test
 * session shows first: the workspace's disclosure, then the greeting (the opening line), as one text. The disclosure is
 * step 0's first line and turn, so an engine leaves it out of the words it sends, as it leaves out the opening line.
 */
export function relayWelcomeGreeting(call: ScriptCall, greeting: string): string {
  return [disclosureOf(call), greeting].filter((text) => text !== '').join(' ');
}

/**
 * The relay greeting as the carrier says it: the agent's dictionary pronunciations in their spoken forms (the greeting
 * is a plain-text attribute: docs/features/dictionaries.md#pronunciations).
 */
export const spokenRelayGreeting = (call: ScriptCall, greeting: string) =>
  spokenTextOf(spokenPiecesOf(relayWelcomeGreeting(call, greeting), pronunciationsOf(call.agent?.hints ?? [])));

/**
 * Which step of the walk:
 * - `answer`: a person answered: the opening line and the first question;
 * - `step`: what the lead answered question `step` (`heard`: the recognised text and its confidence; null when nothing
 *   was heard): the next question, or the closing;
 * - `voicemail`: a machine's greeting has ended: the voicemail message, then hang up.
 */
export type ScriptRequest =
  | { kind: 'answer' }
  | { kind: 'step'; step: number; heard: { text: string; confidence: number | null } | null }
  | { kind: 'voicemail' };

/** A turn of the transcript a step makes: what the lead said before it, and what the agent says in it. */
export interface ScriptTurn {
  /** The script's step (ScriptRequest: 0 the answer, n the answer to question n, VOICEMAIL_STEP the message). */
  step: number;
  /** Its order within the step: 0 the lead's answer, then the agent's lines. */
  part: number;
  speaker: 'agent' | 'lead';
  text: string;
  confidence: number | null;
}

/**
 * What the agent says to a person who asks not to be called again, before it hangs up (every engine says it: the
 * script engine after its opt_out tool, the walk in place of the next question), in the languages the dialogue rules
 * read; any other language: English.
 */
export const OPTED_OUT_LINES: Record<RuleLanguage, string> = {
  en: "I'm sorry to have bothered you. We won't call you again. Goodbye.",
  es: 'Disculpe la molestia. No le volveremos a llamar. Adiós.',
};

/**
 * Whether the lead's answer in this step of the walk asks not to be called again (lib/conversation/intents.ts
 * saysOptOut: in any language the rules know). The carriers' routes then end the call opted_out and list the number
 * (docs/features/carriers/twilio.md#the-script-walk).
 */
export function heardOptOut(request: ScriptRequest): boolean {
  return request.kind === 'step' && request.heard !== null && saysOptOut(request.heard.text);
}

/** The step the voicemail message is stored under: after every question's (at most 50). */
export const VOICEMAIL_STEP = 1000;

/** What the transcript says for a question the lead did not answer (nothing heard). */
export const NO_ANSWER_TEXT = '(no answer)';

/**
 * How long a question waits for the lead to begin answering before the walk goes on with NO_ANSWER_TEXT: Twilio's
 * Gather `timeout`, and the product's own timer on Telnyx, whose transcription has none
 * (api/carriers/telnyx-question-waits.ts).
 */
export const ANSWER_TIMEOUT_SECONDS = 6;

/** One step of the walk: the agent's lines in order, then either a question to listen after, or the hang-up. */
export interface ScriptStep {
  step: number;
  turns: ScriptTurn[];
  /** Said first, in order (filled, never empty). */
  lines: string[];
  /** Asked last and listened for: its answer is step `step + 1`. Null: the step ends the call (hang up after the lines). */
  question: string | null;
}

/**
 * THE SEAM: one step of the agent's script walk, pure (the same call and request give the same step, so a replayed
 * request repeats it, and the turns are stored once per call, step and part):
 * - answered: the workspace's disclosure if it has one, the opening line, then question 1 (no questions: the closing,
 *   then hang up);
 * - step n: the lead's answer to question n (`(no answer)` when nothing was heard), then question n + 1, or after the
 *   last one the closing and hang up;
 * - voicemail: the agent's voicemail message, then hang up (no message: hang up);
 * - an answer that asks not to be called again (heardOptOut): the opted-out line, then hang up, whatever questions
 *   are left.
 * The lead's `{{fields}}` are filled. No agent: hang up at once. A free-form conversation with a language model
 * replaces the questions' walk here, as a step made from what was heard.
 */
export function scriptStepOf(call: ScriptCall, request: ScriptRequest): ScriptStep {
  const step = request.kind === 'answer' ? 0 : request.kind === 'step' ? request.step : VOICEMAIL_STEP;
  const agent = call.agent;
  if (!agent) return { step, turns: [], lines: [], question: null };
  const fill = (text: string) => filled(text, call.lead);
  const turns: ScriptTurn[] = [];
  const lines: string[] = [];
  const says = (text: string) => {
    if (text) turns.push({ step, part: turns.length + 1, speaker: 'agent', text, confidence: null });
    return text;
  };

  if (request.kind === 'voicemail') {
    const message = agent.voicemailMessage ? says(fill(agent.voicemailMessage)) : '';
    return { step, turns, lines: message ? [message] : [], question: null };
  }
  if (request.kind === 'answer') {
    const disclosure = says(disclosureOf(call));
    if (disclosure) lines.push(disclosure);
    const opening = says(fill(agent.script.openingLine));
    if (opening) lines.push(opening);
  } else
    turns.push({
      step,
      part: 0,
      speaker: 'lead',
      text: request.heard?.text.trim() || NO_ANSWER_TEXT,
      confidence: request.heard?.text.trim() ? request.heard.confidence : null,
    });
  if (heardOptOut(request)) {
    lines.push(says(OPTED_OUT_LINES[ruleLanguageOf(agent.language)]));
    return { step, turns, lines, question: null };
  }
  const question = agent.script.questions[step];
  if (question !== undefined) return { step, turns, lines, question: says(fill(question)) };
  const closing = says(fill(agent.script.closing));
  if (closing) lines.push(closing);
  return { step, turns, lines, question: null };
}

/**
 * The dictionaries' terms as recognition hints: their written forms (a pronunciation `written => spoken` is listened
 * for as written), commas made spaces (both carriers' lists), blanks out, each once, at most `max`.
 */
export function speechHints(terms: readonly string[], max: number): string[] {
  const seen = new Set<string>();
  for (const term of terms) {
    const hint = parseTerm(term).written.replace(/,/g, ' ').replace(/\s+/g, ' ').trim();
    if (hint) seen.add(hint);
    if (seen.size === max) break;
  }
  return [...seen];
}
