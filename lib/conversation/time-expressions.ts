import { alternation, type RuleLanguage } from './utterance';

export type PartOfDay = 'morning' | 'afternoon' | 'evening';

export type DaySaid = { daysFromToday: number } | { weekday: number };

export interface ClockSaid {
  /** As said: 1–12 on a twelve-hour clock, 0–23 on a 24-hour one. */
  hour: number;
  /** Minutes past the hour said; -15 for "quarter to", "menos cuarto" (read after the hour's own rule). */
  minute: number;
  meridian?: 'am' | 'pm';
}

/**
 * What an utterance said about a time, slot by slot (docs/features/conversation/rules.md#callback-times). A slot said
 * twice keeps the later one: "tomorrow at three, no, at four" is four.
 */
export interface TimeExpression {
  day?: DaySaid;
  partOfDay?: PartOfDay;
  clock?: ClockSaid;
  /** "in two hours": minutes from now; it is the whole answer, whatever else was said. */
  minutesFromNow?: number;
  /** Where in the normalised utterance it was said, [start, end). */
  span: [number, number];
}

type Slots = Omit<TimeExpression, 'span'>;
type Groups = Record<string, string | undefined>;

interface TimeRule {
  pattern: RegExp;
  read(groups: Groups): Slots | null;
}

const EN_NUMBERS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
  'forty five': 45,
  fortyfive: 45,
  forty: 40,
  fifty: 50,
  'half an': 0.5,
  'a couple of': 2,
  'a couple': 2,
};

const ES_NUMBERS: Record<string, number> = {
  un: 1,
  una: 1,
  uno: 1,
  dos: 2,
  tres: 3,
  cuatro: 4,
  cinco: 5,
  seis: 6,
  siete: 7,
  ocho: 8,
  nueve: 9,
  diez: 10,
  once: 11,
  doce: 12,
  quince: 15,
  veinte: 20,
  treinta: 30,
  'cuarenta y cinco': 45,
  cuarenta: 40,
  media: 0.5,
  cuarto: 0.25,
};

const EN_WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const ES_WEEKDAYS = ['lunes', 'martes', 'miercoles', 'jueves', 'viernes', 'sabado', 'domingo'];
const EN_HOURS = Object.keys(EN_NUMBERS).filter(
  (word) => Number.isInteger(EN_NUMBERS[word]) && EN_NUMBERS[word]! <= 12,
);
const ES_HOURS = Object.keys(ES_NUMBERS).filter(
  (word) => Number.isInteger(ES_NUMBERS[word]) && ES_NUMBERS[word]! <= 12,
);

const numberIn = (table: Record<string, number>, said: string) => (/^\d+$/.test(said) ? Number(said) : table[said]!);

function relativeRule(table: Record<string, number>, pattern: RegExp): TimeRule {
  return {
    pattern,
    read: ({ amount, unit }) => {
      const minutes = numberIn(table, amount!) * (/^h/.test(unit!) ? 60 : 1);
      return minutes > 0 ? { minutesFromNow: minutes } : null;
    },
  };
}

const clockOf = (hour: number, minute: number, meridian?: string): ClockSaid =>
  meridian === 'am' || meridian === 'pm' ? { hour, minute, meridian } : { hour, minute };

const EN_HOUR = `(?<hour>\\d{1,2}|${alternation(EN_HOURS.filter((word) => word.length > 2))})`;
const EN_MINUTE = `(?:[: ](?<minute>\\d\\d|fifteen|thirty|forty five|fortyfive))`;
const EN_PARTS: Record<string, PartOfDay> = {
  morning: 'morning',
  afternoon: 'afternoon',
  evening: 'evening',
  night: 'evening',
};

/** A clock said with its hour and minutes in groups named hour, minute (digits or a word) and meridian. */
function clockRule(table: Record<string, number>, pattern: string): TimeRule {
  return {
    pattern: new RegExp(pattern, 'g'),
    read: ({ hour, minute, meridian }) => ({
      clock: clockOf(numberIn(table, hour!), minute === undefined ? 0 : numberIn(table, minute), meridian),
    }),
  };
}

const EN_RULES: TimeRule[] = [
  relativeRule(
    EN_NUMBERS,
    new RegExp(
      `\\b(?:in|within)(?: about| around)? (?<amount>\\d+|${alternation(Object.keys(EN_NUMBERS))})(?: of)? (?<unit>hours?|hrs?|minutes?|mins?)\\b`,
      'g',
    ),
  ),
  { pattern: /\b(?:the )?day after tomorrow\b/g, read: () => ({ day: { daysFromToday: 2 } }) },
  { pattern: /\btonight\b/g, read: () => ({ day: { daysFromToday: 0 }, partOfDay: 'evening' }) },
  {
    pattern: /\b(?:(?<prefix>this|in the|at) )?(?<part>morning|afternoon|evening|night)\b/g,
    read: ({ prefix, part }) => ({
      ...(prefix === 'this' ? { day: { daysFromToday: 0 } } : {}),
      partOfDay: EN_PARTS[part!]!,
    }),
  },
  { pattern: /\btoday\b/g, read: () => ({ day: { daysFromToday: 0 } }) },
  { pattern: /\btomorrow\b/g, read: () => ({ day: { daysFromToday: 1 } }) },
  {
    pattern: new RegExp(`\\b(?:(?:on|next|this|this coming|coming) )?(?<weekday>${alternation(EN_WEEKDAYS)})\\b`, 'g'),
    read: ({ weekday }) => ({ day: { weekday: EN_WEEKDAYS.indexOf(weekday!) + 1 } }),
  },
  {
    pattern: new RegExp(
      `\\b(?:(?:at|around|about|by|after) )?(?<how>half past|quarter past|quarter to) ${EN_HOUR}(?: (?<meridian>am|pm))?\\b`,
      'g',
    ),
    read: ({ how, hour, meridian }) => ({
      clock: clockOf(numberIn(EN_NUMBERS, hour!), { 'half past': 30, 'quarter past': 15 }[how!] ?? -15, meridian),
    }),
  },
  // "at three", "around 3:30 pm": a bare number is a clock only after a word that makes it one.
  clockRule(
    EN_NUMBERS,
    `\\b(?:at|around|about|by|after)(?: about| around)? ${EN_HOUR}${EN_MINUTE}?(?: (?<meridian>am|pm|oclock))?\\b`,
  ),
  clockRule(EN_NUMBERS, `\\b${EN_HOUR}${EN_MINUTE}? (?<meridian>am|pm|oclock)\\b`),
  clockRule(EN_NUMBERS, `\\b(?<hour>\\d{1,2}):(?<minute>\\d\\d)\\b`),
  { pattern: /\b(?:at )?(?:noon|midday)\b/g, read: () => ({ clock: { hour: 12, minute: 0 } }) },
];

const ES_HOUR = `(?<hour>\\d{1,2}|${alternation(ES_HOURS.filter((word) => word !== 'un' && word !== 'uno'))})`;
const ES_PARTS: Record<string, PartOfDay> = { manana: 'morning', tarde: 'afternoon', noche: 'evening' };

const ES_RULES: TimeRule[] = [
  relativeRule(
    ES_NUMBERS,
    new RegExp(
      `\\b(?:en|dentro de)(?: unos| unas)? (?<amount>\\d+|${alternation(['un', 'una', 'media', ...ES_HOURS, 'quince', 'veinte', 'treinta', 'cuarenta y cinco', 'cuarenta'])}) (?<unit>horas?|minutos?)\\b`,
      'g',
    ),
  ),
  // Before "mañana" the day: "por la mañana" is the morning, "mañana por la mañana" tomorrow morning.
  {
    pattern: /\b(?:(?<prefix>esta)|(?:por|de|en|a) la) (?<part>manana|tarde|noche)\b/g,
    read: ({ prefix, part }) => ({
      ...(prefix ? { day: { daysFromToday: 0 } } : {}),
      partOfDay: ES_PARTS[part!]!,
    }),
  },
  { pattern: /\bpasado manana\b/g, read: () => ({ day: { daysFromToday: 2 } }) },
  { pattern: /\bhoy\b/g, read: () => ({ day: { daysFromToday: 0 } }) },
  { pattern: /\bmanana\b/g, read: () => ({ day: { daysFromToday: 1 } }) },
  {
    pattern: new RegExp(
      `\\b(?:(?:el|este|el proximo|proximo|el siguiente) )?(?<weekday>${alternation(ES_WEEKDAYS)})(?: (?:que viene|proximo|siguiente))?\\b`,
      'g',
    ),
    read: ({ weekday }) => ({ day: { weekday: ES_WEEKDAYS.indexOf(weekday!) + 1 } }),
  },
  {
    pattern: new RegExp(
      `\\b(?:(?:a|sobre|hacia|como a|tipo|despues de|para) )?las? ${ES_HOUR}(?::(?<digits>\\d\\d)| (?<how>y|menos) (?<minute>media|cuarto|quince|treinta|cuarenta y cinco|\\d\\d))?(?: en punto)?(?: (?<meridian>am|pm))?\\b`,
      'g',
    ),
    read: ({ hour, digits, how, minute, meridian }) => {
      const fraction = minute === undefined ? 0 : numberIn(ES_NUMBERS, minute);
      const minutes = digits !== undefined ? Number(digits) : fraction < 1 ? fraction * 60 : fraction;
      return { clock: clockOf(numberIn(ES_NUMBERS, hour!), how === 'menos' ? -minutes : minutes, meridian) };
    },
  },
  clockRule(ES_NUMBERS, `\\b(?<hour>\\d{1,2}):(?<minute>\\d\\d)\\b`),
  { pattern: /\b(?:al )?mediodia\b/g, read: () => ({ clock: { hour: 12, minute: 0 } }) },
];

/** Exported for the hostile-input suite's reference (test/hostile/dialogue.test.ts). */
export const TIME_RULES: Record<RuleLanguage, readonly TimeRule[]> = { en: EN_RULES, es: ES_RULES };

/** Stands for text a rule has read, so that no later rule reads it again; not a word character, so \b still holds. */
const READ = '#';

/**
 * The time said in a normalised utterance, or null when none was. The rules run in order, each over what the earlier
 * ones left, so that the longer reading wins ("por la mañana" before "mañana", "in two hours" before "at two").
 */
export function findTimeExpression(text: string, language: RuleLanguage): TimeExpression | null {
  let unread = text;
  const found: { start: number; end: number; slots: Slots }[] = [];
  for (const rule of TIME_RULES[language]) {
    // A rule's readings are all of the text as the earlier rules left it; they are marked read at once after, in one
    // pass (marking each as it was found copied the text once a reading: quadratic, docs/hostile-input.md).
    const read: [number, number][] = [];
    for (const match of unread.matchAll(rule.pattern)) {
      const slots = rule.read(match.groups ?? {});
      if (!slots) continue;
      const start = match.index;
      const end = start + match[0].length;
      found.push({ start, end, slots });
      read.push([start, end]);
    }
    if (read.length > 0) unread = markedRead(unread, read);
  }
  if (found.length === 0) return null;
  found.sort((a, b) => a.start - b.start);
  const slots: Slots = {};
  let end = 0;
  for (const reading of found) {
    Object.assign(slots, reading.slots);
    end = Math.max(end, reading.end);
  }
  return { ...slots, span: [found[0]!.start, end] };
}

/** The text with each span (in order, not overlapping) replaced by as many READ characters. */
function markedRead(text: string, spans: readonly [number, number][]): string {
  const parts: string[] = [];
  let from = 0;
  for (const [start, end] of spans) {
    parts.push(text.slice(from, start), READ.repeat(end - start));
    from = end;
  }
  parts.push(text.slice(from));
  return parts.join('');
}
