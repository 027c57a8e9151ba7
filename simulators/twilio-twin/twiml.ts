import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { RelaySettings } from './relay';

/**
 * The TwiML the twin obeys (docs/features/carriers/twins.md#the-twilio-twin), read into plain data: a call's program is kept
 * in its row as these verbs, so a restarted twin goes on where it was. Attributes keep Twilio's defaults
 * (https://www.twilio.com/docs/voice/twiml).
 */
export type HttpMethod = 'GET' | 'POST';

export type PromptVerb =
  | { verb: 'Say'; text: string; voice: string | null; language: string | null; loop: number }
  | { verb: 'Play'; url: string; loop: number }
  | { verb: 'Pause'; lengthSec: number };

export type Verb =
  | PromptVerb
  | {
      verb: 'Gather';
      input: string[];
      hints: string[];
      /** Seconds of silence after speech that end it, or Twilio's 'auto'. */
      speechTimeout: number | 'auto';
      /** Seconds to wait for the caller to start. */
      timeoutSec: number;
      action: string | null;
      method: HttpMethod;
      language: string;
      actionOnEmptyResult: boolean;
      prompts: PromptVerb[];
    }
  | { verb: 'Redirect'; url: string; method: HttpMethod }
  | { verb: 'Hangup' }
  | {
      verb: 'Dial';
      number: string;
      action: string | null;
      method: HttpMethod;
      timeoutSec: number;
      /**
       * <Number url>: TwiML run on the called party's end once they answer, before the two are connected (Twilio's
       * whisper, https://www.twilio.com/docs/voice/twiml/number#attributes-url); absent in calls stored before it.
       */
      whisper?: { url: string; method: HttpMethod } | null;
    }
  | {
      verb: 'Connect';
      action: string | null;
      method: HttpMethod;
      noun: string;
      /** <ConversationRelay>'s settings (docs/features/conversation/relay.md#the-twin); null for another noun. */
      relay: RelaySettings | null;
    }
  /** Valid TwiML the twin does not act on (Record, Enqueue, Sms...): skipped, and named in the call's log. */
  | { verb: 'Unsupported'; name: string };

export class TwimlError extends Error {
  constructor(
    /** Twilio's: 12100 document parse failure, 12200 schema validation warning. */
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

type Node = Record<string, unknown> & { ':@'?: Record<string, string> };

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  preserveOrder: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
});

const nameOf = (node: Node) => Object.keys(node).find((key) => key !== ':@')!;
const childrenOf = (node: Node) => (node[nameOf(node)] as Node[] | undefined) ?? [];
/** The words a verb holds; inside `<Say>`, an SSML `<sub alias>` (Twilio's Polly voices read SSML) is said as its alias. */
const textOf = (node: Node): string =>
  childrenOf(node)
    .map((child) =>
      nameOf(child) === '#text'
        ? String(child['#text'])
        : nameOf(child) === 'sub' && child[':@']?.alias !== undefined
          ? child[':@'].alias
          : textOf(child),
    )
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();

const method = (value: string | undefined): HttpMethod => (value?.toUpperCase() === 'GET' ? 'GET' : 'POST');
const number = (value: string | undefined, fallback: number) => {
  const parsed = Number(value);
  return value !== undefined && Number.isFinite(parsed) && parsed >= 0 ? parsed : fallback;
};
/** A URL of the document resolved against the document's own, as Twilio resolves relative URLs. */
const resolved = (url: string, base: string | null) => {
  try {
    return new URL(url, base ?? undefined).toString();
  } catch {
    throw new TwimlError(12100, `not a URL: ${url}`);
  }
};

function prompt(node: Node): PromptVerb | null {
  const attributes = node[':@'] ?? {};
  switch (nameOf(node)) {
    case 'Say':
      return {
        verb: 'Say',
        text: textOf(node),
        voice: attributes.voice ?? null,
        language: attributes.language ?? null,
        loop: Math.max(1, number(attributes.loop, 1)),
      };
    case 'Play':
      return { verb: 'Play', url: textOf(node), loop: Math.max(1, number(attributes.loop, 1)) };
    case 'Pause':
      return { verb: 'Pause', lengthSec: number(attributes.length, 1) };
    default:
      return null;
  }
}

/** <ConversationRelay url="ws(s)://..." ...> and its <Parameter name value>s (Twilio's attribute names). */
function relaySettings(node: Node): RelaySettings {
  const attributes = node[':@'] ?? {};
  if (!attributes.url || !/^wss?:\/\//.test(attributes.url))
    throw new TwimlError(12200, 'ConversationRelay needs a ws:// or wss:// url');
  const parameters: Record<string, string> = {};
  for (const child of childrenOf(node))
    if (nameOf(child) === 'Parameter' && child[':@']?.name) parameters[child[':@'].name] = child[':@'].value ?? '';
  return {
    url: attributes.url,
    welcomeGreeting: attributes.welcomeGreeting ?? null,
    language: attributes.language ?? 'en-US',
    voice: attributes.voice ?? null,
    hints: (attributes.hints ?? '')
      .split(',')
      .map((hint) => hint.trim())
      .filter(Boolean),
    parameters,
  };
}

function verb(node: Node, base: string | null): Verb {
  const name = nameOf(node);
  const attributes = node[':@'] ?? {};
  const asPrompt = prompt(node);
  if (asPrompt) return asPrompt;
  switch (name) {
    case 'Gather': {
      const timeoutSec = number(attributes.timeout, 5);
      return {
        verb: 'Gather',
        input: (attributes.input ?? 'dtmf').split(/\s+/).filter(Boolean),
        hints: (attributes.hints ?? '')
          .split(',')
          .map((hint) => hint.trim())
          .filter(Boolean),
        speechTimeout: attributes.speechTimeout === 'auto' ? 'auto' : number(attributes.speechTimeout, timeoutSec),
        timeoutSec,
        action: attributes.action ? resolved(attributes.action, base) : null,
        method: method(attributes.method),
        language: attributes.language ?? 'en-US',
        actionOnEmptyResult: attributes.actionOnEmptyResult === 'true',
        prompts: childrenOf(node)
          .map(prompt)
          .filter((child): child is PromptVerb => child !== null),
      };
    }
    case 'Redirect':
      return { verb: 'Redirect', url: resolved(textOf(node), base), method: method(attributes.method) };
    case 'Hangup':
      return { verb: 'Hangup' };
    case 'Dial': {
      const numberNode = childrenOf(node).find((child) => nameOf(child) === 'Number');
      const dialed = numberNode ? textOf(numberNode) : textOf(node);
      const numberAttributes = numberNode?.[':@'] ?? {};
      return {
        verb: 'Dial',
        number: dialed,
        action: attributes.action ? resolved(attributes.action, base) : null,
        method: method(attributes.method),
        timeoutSec: number(attributes.timeout, 30),
        whisper: numberAttributes.url
          ? { url: resolved(numberAttributes.url, base), method: method(numberAttributes.method) }
          : null,
      };
    }
    case 'Connect': {
      const noun =
        childrenOf(node)
          .map(nameOf)
          .find((child) => child !== '#text') ?? 'Stream';
      const relayNode = childrenOf(node).find((child) => nameOf(child) === 'ConversationRelay');
      const relay = relayNode && relaySettings(relayNode);
      return {
        verb: 'Connect',
        action: attributes.action ? resolved(attributes.action, base) : null,
        method: method(attributes.method),
        noun,
        relay: relay ?? null,
      };
    }
    default:
      return { verb: 'Unsupported', name };
  }
}

/** The verbs of a TwiML document; `base` is the URL it was fetched from (null for a create's inline Twiml). */
export function parseTwiml(document: string, base: string | null): Verb[] {
  const valid = XMLValidator.validate(document);
  if (valid !== true) throw new TwimlError(12100, `Document parse failure: ${valid.err.msg}`);
  const nodes = (parser.parse(document) as Node[]).filter((node) => !nameOf(node).startsWith('?'));
  const root = nodes.find((node) => nameOf(node) !== '#text');
  if (!root || nameOf(root) !== 'Response')
    throw new TwimlError(12100, 'Document parse failure: the root is not <Response>');
  return childrenOf(root)
    .filter((node) => nameOf(node) !== '#text')
    .map((node) => verb(node, base));
}
