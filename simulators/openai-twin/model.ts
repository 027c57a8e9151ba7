/**
 * The OpenAI twin's "model" (docs/features/conversation/model-engine.md#the-twins-model): deterministic rules over the request's
 * messages, its own, independent of the product's dialogue rules (lib/conversation/ is not imported: the twin plays the
 * provider, and a shared rule would hide a fault on either side).
 */

/** A message of a chat completions request, as far as the rules read it. */
export interface TwinMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface TwinToolCall {
  name: string;
  /** The arguments as the model writes them: a JSON text (or anything, when a test scripts a broken one). */
  arguments: string;
}

/** What the model answers: words, then tool calls (either may be empty). */
export interface TwinReply {
  content: string;
  toolCalls: TwinToolCall[];
}

/** The text of a message's content: a string, or the text parts of an array of parts. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part: unknown) =>
        part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string'
          ? (part as { text: string }).text
          : '',
      )
      .join('');
  return '';
}

const OPT_OUT =
  /\b(stop calling|stop contacting|don'?t call|do not call|never call|remove me|remove my number|unsubscribe|opt out|leave me alone|no more calls|no me llame|no me vuelva a llamar|dejen? de llamar)\b/;
const PERSON =
  /\b(a (real |live )?(person|human|agent|representative|operator)|someone real|speak to someone|talk to someone|transfer me|una persona|un humano|un agente)\b/;
const CALLBACK =
  /\b(call me back|call back|callback|call me (later|tomorrow|tonight|on|at|in)|later|tomorrow|tonight|this (morning|afternoon|evening)|next (week|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|at \d{1,2}|\d{1,2} ?(am|pm)|llamame|llameme|manana|mas tarde)\b/;
const GOODBYE = /\b(bye|goodbye|good bye|that'?s all|i'?m done|we'?re done|adios|hasta luego)\b/;

/** The lead's words, lower case, accents and curly quotes made plain. */
const normalised = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[\u2018\u2019]/g, "'");

/**
 * The first knowledge passage of a system message: `<passage ...>text</passage>`, or a data message's (a heading
 * line, then a JSON object whose `knowledge` is a list of `{ title, text }`); else null.
 */
export function firstPassage(system: string): string | null {
  const match = /<passage\b[^>]*>([\s\S]*?)<\/passage>/.exec(system);
  if (match) return match[1]!.trim();
  const json = system.slice(system.indexOf('\n') + 1);
  if (!json.startsWith('{')) return null;
  try {
    const knowledge = (JSON.parse(json) as { knowledge?: Array<{ text?: unknown }> }).knowledge;
    const text = Array.isArray(knowledge) ? knowledge[0]?.text : undefined;
    return typeof text === 'string' && text.trim() ? text.trim() : null;
  } catch {
    return null;
  }
}

export const TWIN_REPLIES = {
  opening: 'Hello! How can I help you today?',
  acknowledgement: 'Thank you, I understand. Is there anything else you would like to know?',
  knowledge: (passage: string) => `Here is what I can tell you: ${passage}`,
  goodbye: 'Thank you for your time. Goodbye.',
  transferred: 'I am transferring you to a colleague now. Please hold.',
  optedOut: 'I am sorry for the trouble. You will not be called again. Goodbye.',
  scheduled: (when: string) => `All set, we will call you back ${when}. Goodbye.`,
  failed: 'I am sorry, I could not do that.',
} as const;

const call = (name: string, args: Record<string, unknown>): TwinToolCall => ({
  name,
  arguments: JSON.stringify(args),
});

/**
 * The reply to a conversation: after tool results (the last messages are `tool` messages), a confirmation of the
 * tool the assistant called; after the lead's words, a tool call by the first rule that matches (opt-out, a person,
 * a callback time, goodbye), else the first knowledge passage of the system message quoted, else a fixed
 * acknowledgement; with no words of the lead yet, an opening. A tool is called only if the request offers it.
 */
export function twinReply(messages: readonly TwinMessage[], offered: ReadonlySet<string>): TwinReply {
  const last = messages[messages.length - 1];
  const say = (content: string): TwinReply => ({ content, toolCalls: [] });
  if (last?.role === 'tool') {
    const assistant = [...messages].reverse().find((message) => message.role === 'assistant' && message.tool_calls);
    const called = assistant?.tool_calls?.find((toolCall) => toolCall.id === last.tool_call_id);
    if (/^error\b/i.test(textOf(last.content))) return say(TWIN_REPLIES.failed);
    switch (called?.function.name) {
      case 'transfer_to_human':
        return say(TWIN_REPLIES.transferred);
      case 'opt_out':
        return say(TWIN_REPLIES.optedOut);
      case 'schedule_callback': {
        let when = 'then';
        try {
          const said = (JSON.parse(called.function.arguments) as { when?: unknown }).when;
          if (typeof said === 'string' && said) when = said;
        } catch {
          // a broken argument text: the plain confirmation
        }
        return say(TWIN_REPLIES.scheduled(when));
      }
      default:
        // end_call (its goodbye was said with the call): nothing more to say.
        return say('');
    }
  }
  const user = [...messages].reverse().find((message) => message.role === 'user');
  if (!user) return say(TWIN_REPLIES.opening);
  const words = textOf(user.content);
  const heard = normalised(words);
  const tool = (name: string, args: Record<string, unknown>, content = ''): TwinReply | null =>
    offered.has(name) ? { content, toolCalls: [call(name, args)] } : null;
  const reply =
    (OPT_OUT.test(heard) ? tool('opt_out', {}) : null) ??
    (PERSON.test(heard) ? tool('transfer_to_human', { summary: `The lead asked for a person: "${words}"` }) : null) ??
    (CALLBACK.test(heard) ? tool('schedule_callback', { when: words }) : null) ??
    (GOODBYE.test(heard)
      ? (tool('end_call', { reason: 'the lead said goodbye' }, TWIN_REPLIES.goodbye) ?? say(TWIN_REPLIES.goodbye))
      : null);
  if (reply) return reply;
  let passage: string | null = null;
  for (const message of messages)
    if (message.role === 'system' || message.role === 'developer') passage ??= firstPassage(textOf(message.content));
  return say(passage ? TWIN_REPLIES.knowledge(passage) : TWIN_REPLIES.acknowledgement);
}

/** A text as the twin streams it: word by word, each word with the space after it. */
export const wordsOf = (text: string): string[] => text.split(/(?<=\s)/).filter((word) => word !== '');

/**
 * A tool call's argument text in fragments, as a model streams it: pieces of at most 8 characters, so that any
 * argument of more than a few characters arrives across chunks.
 */
export function fragmentsOf(text: string): string[] {
  const fragments: string[] = [];
  for (let at = 0; at < text.length; at += 8) fragments.push(text.slice(at, at + 8));
  return fragments.length ? fragments : [''];
}
