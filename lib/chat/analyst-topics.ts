import type { ChatTurn } from './provider';

/**
 * The builtin analyst's topics and the words that name each (docs/features/chat.md). A keyword matches at
 * the start of a word, ignoring case: "fail" matches "failed" and "failures", "hour" "hourly".
 */
export const ANALYST_TOPICS = {
  performance: [
    'kpi',
    'overview',
    'summary',
    'summarise',
    'summarize',
    'performance',
    'doing',
    'going',
    'progress',
    'connect',
    'pickup',
    'pick up',
    'picked up',
    'reach',
    'rate',
    'contacts',
    'dialed',
    'dialled',
    'duration',
    'how many',
    'pending',
    'completed',
  ],
  timing: ['hour', 'time', 'when', 'day', 'weekday', 'morning', 'afternoon', 'evening', 'best', 'trend', 'schedule'],
  outcomes: [
    'outcome',
    'fail',
    'busy',
    'no answer',
    'no_answer',
    'unanswered',
    'voicemail',
    'invalid',
    'reason',
    'why',
    'result',
  ],
  intelligence: ['intelligence', 'extract', 'field', 'said', 'say', 'interest', 'insight', 'learn', 'answers'],
  orders: ['order', 'revenue', 'sale', 'purchase', 'bought', 'buy', 'attribut', 'money', 'roi', 'conversion'],
} as const;

export type AnalystTopic = keyof typeof ANALYST_TOPICS;

/** Questions the analyst cannot answer from a campaign's own data, and why: said plainly, never guessed. */
export const OUT_OF_SCOPE: ReadonlyArray<{ keywords: readonly string[]; reason: string }> = [
  {
    keywords: ['predict', 'forecast', 'will ', 'next week', 'next month', 'future', 'expect'],
    reason: 'I cannot predict future results: I only report what this campaign has recorded so far.',
  },
  {
    keywords: ['cost', 'spend', 'spent', 'credit', 'price per', 'budget of the campaign', 'billing'],
    reason: "I cannot tell what the campaign cost: credits and billing are not among this campaign's data I read.",
  },
  {
    keywords: ['compare', 'other campaign', 'competitor', 'industry', 'benchmark', 'average campaign'],
    reason: 'I cannot compare with other campaigns or the market: I only read this campaign.',
  },
];

/** A question that continues the one before ("and by day?", "what about failures?") takes its topics when it names none. */
const FOLLOW_UP = /^\s*(and|what about|how about|also|more|then|same|ok|okay|so)\b/i;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const mentions = (text: string, keyword: string) =>
  new RegExp(`(^|[^a-z0-9])${escapeRegExp(keyword.trim())}`, 'i').test(text) &&
  (!keyword.endsWith(' ') || text.toLowerCase().includes(keyword));

/** The topics a text names, in the order the analyst answers them. */
export function topicsOf(text: string): AnalystTopic[] {
  return (Object.keys(ANALYST_TOPICS) as AnalystTopic[]).filter((topic) =>
    ANALYST_TOPICS[topic].some((keyword) => mentions(text, keyword)),
  );
}

/** What the question is about: its own topics, else (a follow-up) those of the last question that named some. */
export function questionTopics(question: string, history: readonly ChatTurn[]): AnalystTopic[] {
  const own = topicsOf(question);
  if (own.length || !FOLLOW_UP.test(question)) return own;
  for (const turn of [...history].reverse()) {
    if (turn.role !== 'user') continue;
    const earlier = topicsOf(turn.content);
    if (earlier.length) return earlier;
  }
  return [];
}

/** Why parts of the question cannot be answered, one reason per kind of question it asks. */
export function outOfScopeReasons(question: string): string[] {
  return OUT_OF_SCOPE.filter(({ keywords }) => keywords.some((keyword) => mentions(question, keyword))).map(
    ({ reason }) => reason,
  );
}
