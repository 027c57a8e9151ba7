import { seededPicker, type SeededPicker as Picker } from '../twin-common/seeded-picker';
import { fieldValue, filled, leadingIsoDate, questionOfEachField, spokenDate } from './agent-script';
import type { TranscriptTurn } from './protocol';

/**
 * The conversation of a simulated call (docs/features/call-intelligence.md, "Simulated conversations"): a pure,
 * deterministic function of the agent, the lead, who answered, the call's length and a seed (the carrier passes its
 * call id), so that the same call always has the same transcript and tests can know it in advance. No I/O and no Node
 * built-ins: it may run anywhere, workflow code included.
 */
export interface SimulatedConversationInput {
  agent: SimulatedConversationAgent | null;
  lead: { name: string | null; fields: Record<string, unknown> };
  answeredBy: 'human' | 'machine';
  durationMs: number;
  seed: string;
}

export interface SimulatedConversationAgent {
  script: { openingLine: string; questions: readonly string[]; closing: string };
  extractionFields: ReadonlyArray<{ name: string; type: string; allowedValues?: readonly string[] }>;
  language: string;
}

type Line = Omit<TranscriptTurn, 'offsetMs'>;

export function simulatedConversation(input: SimulatedConversationInput): TranscriptTurn[] {
  const pick = seededPicker(input.seed);
  const lines =
    input.answeredBy === 'machine'
      ? voicemail(input, pick)
      : input.agent
        ? conversation(input.agent, input.lead, pick)
        : genericConversation(input.lead, pick);
  return withOffsets(lines, input.durationMs);
}

function conversation(
  agent: SimulatedConversationAgent,
  lead: SimulatedConversationInput['lead'],
  pick: Picker,
): Line[] {
  const say = (text: string): Line => ({ speaker: 'agent', text: filled(text, lead) });
  const questions = agent.script.questions.map((question) => filled(question, lead));
  const askedBy = questionOfEachField(
    agent.extractionFields.map((field) => field.name),
    questions,
  );
  const lines: Line[] = [say(agent.script.openingLine), { speaker: 'lead', text: greeting(lead, pick) }];
  questions.forEach((question, questionIndex) => {
    const fieldIndex = askedBy.indexOf(questionIndex);
    const field = agent.extractionFields[fieldIndex];
    lines.push({ speaker: 'agent', text: question });
    lines.push({ speaker: 'lead', text: field ? answer(field, lead.fields, pick) : pick('ack', ACKNOWLEDGEMENTS) });
  });
  if (agent.script.closing !== '') lines.push(say(agent.script.closing));
  return lines.filter((line) => line.text !== '');
}

function voicemail(input: SimulatedConversationInput, pick: Picker): Line[] {
  const greetingText = input.lead.name
    ? `Hi, you've reached ${input.lead.name}. Please leave a message after the tone.`
    : pick('voicemail', ['The person you are calling is not available. Please leave a message after the tone.']);
  const message = input.agent
    ? [input.agent.script.openingLine, input.agent.script.closing].map((text) => filled(text, input.lead))
    : [GENERIC_VOICEMAIL_MESSAGE];
  return [
    { speaker: 'lead', text: greetingText },
    { speaker: 'agent', text: message.filter((text) => text !== '').join(' ') },
  ];
}

const GENERIC_VOICEMAIL_MESSAGE = 'Hello, this is an automated call. We will try to reach you again later. Goodbye.';

function genericConversation(lead: SimulatedConversationInput['lead'], pick: Picker): Line[] {
  return [
    {
      speaker: 'agent',
      text: lead.name ? `Hello, am I speaking with ${lead.name}?` : 'Hello, is this a good time to talk?',
    },
    { speaker: 'lead', text: greeting(lead, pick) },
    { speaker: 'agent', text: 'This is an automated call. Thank you for your time. Goodbye.' },
    { speaker: 'lead', text: pick('bye', ['Goodbye.', 'Okay, bye.', 'Thanks, bye.']) },
  ];
}

function greeting(lead: SimulatedConversationInput['lead'], pick: Picker): string {
  return lead.name
    ? pick('greeting', [
        `Hello, yes, this is ${lead.name}.`,
        `Hi, ${lead.name} speaking.`,
        `Yes, this is ${lead.name}.`,
      ])
    : pick('greeting', ['Hello?', 'Hi, who is this?', 'Yes, hello.']);
}

export const ACKNOWLEDGEMENTS = ['Sure.', 'Okay, go on.', 'I see.', 'That makes sense.'];

/**
 * The lead's answer to the question asking for a field: the lead's own value of the field when it has
 * one that fits the type, otherwise a value chosen by the seed (enum: one of allowedValues; number:
 * 1 to 100; boolean: yes or no; date: a day of 2026); a string field the lead has no value for is a
 * non-answer, so the extractor leaves it unfilled.
 */
function answer(
  field: SimulatedConversationAgent['extractionFields'][number],
  leadFields: Record<string, unknown>,
  pick: Picker,
): string {
  const own = leadValue(field, leadFields);
  const key = `field:${field.name}`;
  switch (field.type) {
    case 'number': {
      const value = (own as number | undefined) ?? 1 + pick.index(key, 100);
      return pick(key, [`About ${value}.`, `I'd say ${value}.`, `${value}.`]);
    }
    case 'boolean': {
      const value = (own as boolean | undefined) ?? pick.index(key, 2) === 0;
      return value
        ? pick(key, ['Yes, definitely.', 'Yes.', 'Yeah, sure.'])
        : pick(key, ['No, not really.', 'No.', "No, I don't think so."]);
    }
    case 'enum': {
      const allowed = field.allowedValues ?? [];
      const value = (own as string | undefined) ?? allowed[pick.index(key, allowed.length)];
      return value === undefined
        ? pick(key, NON_ANSWER_LINES)
        : pick(key, [`I'd say ${value}.`, `${value}, I think.`, `Probably ${value}.`]);
    }
    case 'date': {
      const value = (own as string | undefined) ?? dayOf2026(pick.index(key, 365));
      const spoken = spokenDate(value);
      return pick(key, [`How about ${spoken}?`, `${spoken} works for me.`, `Let's say ${spoken}.`]);
    }
    default: {
      if (own === undefined) return pick(key, NON_ANSWER_LINES);
      const value = own as string;
      const end = /[.!?]$/.test(value) ? '' : '.';
      return pick(key, [`It's ${value}${end}`, `That would be ${value}${end}`, `${value}${end}`]);
    }
  }
}

const NON_ANSWER_LINES = ["I'm not sure, sorry.", "I'd rather not say."];

/** The lead's value of a field (its name exactly, else ignoring case) when it fits the field's type. */
function leadValue(
  field: SimulatedConversationAgent['extractionFields'][number],
  leadFields: Record<string, unknown>,
): string | number | boolean | undefined {
  const value = fieldValue(field.name, leadFields);
  const text =
    typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value).trim() : '';
  if (text === '') return undefined;
  switch (field.type) {
    case 'number': {
      const number = typeof value === 'number' ? value : typeof value === 'string' ? Number(text) : NaN;
      return Number.isFinite(number) ? number : undefined;
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      const word = text.toLowerCase();
      return ['true', 'yes'].includes(word) ? true : ['false', 'no'].includes(word) ? false : undefined;
    }
    case 'enum':
      return field.allowedValues?.find((allowed) => allowed.toLowerCase() === text.toLowerCase());
    case 'date':
      return typeof value === 'string' ? (leadingIsoDate(value) ?? undefined) : undefined;
    default:
      return text;
  }
}

function dayOf2026(index: number): string {
  return new Date(Date.UTC(2026, 0, 1 + index)).toISOString().slice(0, 10);
}

/**
 * Turn i starts after the turns before it, each taking a share of durationMs in proportion to its
 * length in characters plus 20 (a pause), so that longer turns take longer; the first starts at 0.
 */
function withOffsets(lines: Line[], durationMs: number): TranscriptTurn[] {
  const weights = lines.map((line) => line.text.length + 20);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  let before = 0;
  return lines.map((line, index) => {
    const offsetMs = Math.floor((Math.max(0, durationMs) * before) / total);
    before += weights[index]!;
    return { ...line, offsetMs };
  });
}
