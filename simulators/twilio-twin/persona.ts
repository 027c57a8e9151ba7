import { z } from 'zod';
import { seededPicker } from '../twin-common/seeded-picker';
import { ANSWERED_BY } from './plan';

/**
 * Who answers the twin's calls (docs/features/carriers/twins.md#the-twilio-twin). By default a pure function of the number and
 * the question, so that a test knows in advance what the person will say to each <Gather> (drawn like the simulated
 * conversation's answers, by a seeded picker: simulators/twin-common/seeded-picker.ts). A test can script a number
 * instead (POST /control/personas): its answers in the order its Gathers come, and what detection finds.
 */
export interface SpeechAnswer {
  speech: string;
  confidence: number;
}

export const personaScriptSchema = z.object({
  /** The answer to each Gather in turn: a text (confidence 0.9), a text with its confidence, or null for silence. */
  answers: z
    .array(
      z.union([
        z.string().min(1),
        z.object({ speech: z.string().min(1), confidence: z.number().min(0).max(1).default(0.9) }),
        z.null(),
      ]),
    )
    .default([]),
  /**
   * On a ConversationRelay call: the agent's turn (0-based) at which the twin cuts the socket instead of answering,
   * the line staying open (a dropped conversation).
   */
  relayDropsAt: z.number().int().min(0).optional(),
  /**
   * On a ConversationRelay call: the agent's turn (0-based) the caller speaks over, halfway through its words: the twin
   * sends `interrupt` (what was said until then) and then the persona's answer to that turn.
   */
  relayInterruptsAt: z.number().int().min(0).optional(),
  /** On a ConversationRelay call: the agent's turn (0-based) at which the caller hangs up instead of answering. */
  relayHangsUpAt: z.number().int().min(0).optional(),
  /** What answering-machine detection finds on this number instead of what its last digit says. */
  answeredBy: z.enum(ANSWERED_BY).optional(),
});
export type PersonaScript = z.infer<typeof personaScriptSchema>;

/**
 * The personas the twins play without a script (docs/features/conversation/relay.md#personas), chosen by the number: a
 * number whose last four digits are 07TD (+1 415 555 07TD, say) plays persona T, D still deciding who answers and how
 * (0-4 a person, as every twin number). Deterministic: the same number always plays the same caller.
 */
export const BUILT_IN_PERSONAS: Record<string, { name: string; script: PersonaScript }> = {
  '1': { name: 'asks to be called back tomorrow at 3 pm', script: { answers: ['Call me back tomorrow at 3 pm.'] } },
  '2': { name: 'says "stop calling me"', script: { answers: ['Please stop calling me.'] } },
  '3': { name: 'asks for a person', script: { answers: ['Can I talk to a real person?'] } },
  '4': { name: "speaks over the agent's first words, then answers", script: { answers: [], relayInterruptsAt: 0 } },
  '5': { name: 'stays silent', script: { answers: [null, null, null, null] } },
  '6': { name: "hangs up halfway (at the agent's second turn)", script: { answers: [], relayHangsUpAt: 1 } },
};

/** The persona a call to `number` plays: the one a test scripted for it, else its built-in one, else none (the default). */
export function personaOf(scripted: ReadonlyMap<string, PersonaScript>, number: string): PersonaScript | null {
  const chosen = /55507(\d)\d$/.exec(number);
  return scripted.get(number) ?? (chosen ? (BUILT_IN_PERSONAS[chosen[1]!]?.script ?? null) : null);
}

/** What the default person says to a Gather that is neither a question with hints nor a yes/no question. */
const ACKNOWLEDGEMENTS = ['Sure.', 'Okay, go on.', 'I see.', 'That makes sense.'];

const YES_NO = /^(is|are|am|do|does|did|can|could|would|will|have|has|had|shall|should|may|was|were)\b/i;

/**
 * The default person's answer to a Gather: one of the hints when the Gather has some (what the agent expects to hear),
 * yes or no to a yes/no question, an acknowledgement otherwise; a confidence between 0.80 and 0.98. Chosen by the
 * number and the question, so the same question to the same number always has the same answer.
 */
export function defaultAnswer(number: string, question: string, hints: readonly string[]): SpeechAnswer {
  const pick = seededPicker(number.replace(/\D/g, ''));
  const purpose = question.toLowerCase().replace(/\s+/g, ' ').trim();
  const confidence = 0.8 + pick.index(`confidence:${purpose}`, 19) / 100;
  if (hints.length > 0) {
    const hint = pick(`hint:${purpose}`, hints);
    return { speech: pick(`phrase:${purpose}`, [`${hint}.`, `I'd say ${hint}.`, `${hint}, I think.`]), confidence };
  }
  if (YES_NO.test(purpose))
    return {
      speech: pick(`yes-no:${purpose}`, ['Yes, definitely.', 'Yes.', 'Yeah, sure.', 'No, not really.', 'No.']),
      confidence,
    };
  return { speech: pick(`ack:${purpose}`, ACKNOWLEDGEMENTS), confidence };
}

/** The answer to the `index`-th Gather (0-based) of a call to `number`: scripted when the script has one, else the default's. */
export function personaAnswer(
  number: string,
  script: PersonaScript | null,
  index: number,
  question: string,
  hints: readonly string[],
): SpeechAnswer | null {
  if (script && index < script.answers.length) {
    const scripted = script.answers[index]!;
    return scripted === null ? null : typeof scripted === 'string' ? { speech: scripted, confidence: 0.9 } : scripted;
  }
  return defaultAnswer(number, question, hints);
}

/**
 * The answer to the agent's `index`-th turn of a ConversationRelay call: a scripted persona says its answers and then
 * nothing (so the closing is never answered, whatever the timing); the default person answers every turn.
 */
export function relayPersonaAnswer(
  number: string,
  script: PersonaScript | null,
  index: number,
  said: string,
  hints: readonly string[],
): SpeechAnswer | null {
  if (script && script.answers.length > 0 && index >= script.answers.length) return null;
  return personaAnswer(number, script, index, said, hints);
}
