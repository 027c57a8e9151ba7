/**
 * The OpenAI twin's structured outputs (docs/features/conversation/model-engine.md#structured-outputs): `response_format` of type
 * `json_schema`. The request's schema is held to strict mode's rules as OpenAI states them, and answered with a JSON
 * value that fills the schema by deterministic rules of the twin's own, read from a transcript in the user message
 * (`speaker: words` lines). Nothing of the product is imported: the twin plays the provider, and a shared rule would
 * hide a fault on either side.
 */
import { textOf, type TwinMessage } from './model';

type Schema = Record<string, unknown>;
const isObject = (value: unknown): value is Schema => !!value && typeof value === 'object' && !Array.isArray(value);

/**
 * The first way the schema breaks strict mode's rules, as OpenAI words it, or null: the root is an object; every
 * object has `additionalProperties: false` and `required` naming every one of its properties.
 */
export function strictSchemaProblem(schema: unknown): string | null {
  if (!isObject(schema) || schema.type !== 'object')
    return 'In context=(), schema must be a JSON Schema of \'type: "object"\', got another type.';
  return objectProblem(schema, []);
}

function objectProblem(node: unknown, context: string[]): string | null {
  if (!isObject(node)) return null;
  const where = `In context=(${context.map((part) => `'${part}'`).join(', ')})`;
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes('object')) {
    if (node.additionalProperties !== false)
      return `${where}, 'additionalProperties' is required to be supplied and to be false.`;
    const keys = Object.keys(isObject(node.properties) ? node.properties : {});
    const required = Array.isArray(node.required) ? node.required : null;
    const missing = keys.find((key) => !required?.includes(key));
    const rule = `${where}, 'required' is required to be supplied and to be an array including every key in properties.`;
    if (!required) return rule;
    if (missing !== undefined) return `${rule} Missing '${missing}'.`;
  }
  const children: Array<[unknown, string[]]> = [];
  if (isObject(node.properties))
    for (const [key, child] of Object.entries(node.properties)) children.push([child, [...context, 'properties', key]]);
  if (node.items !== undefined) children.push([node.items, [...context, 'items']]);
  for (const keyword of ['anyOf', '$defs', 'definitions'] as const) {
    const value = node[keyword];
    if (Array.isArray(value))
      value.forEach((child, index) => children.push([child, [...context, keyword, `${index}`]]));
    else if (isObject(value))
      for (const [key, child] of Object.entries(value)) children.push([child, [...context, keyword, key]]);
  }
  for (const [child, at] of children) {
    const problem = objectProblem(child, at);
    if (problem) return problem;
  }
  return null;
}

/** A line of the transcript: `[time] speaker (anything): words`, the time and the parenthesis optional. */
const LINE = /^\s*(?:\[[^\]]*\]\s*)?(agent|lead|tool)\b[^:]*:\s*(.*)$/i;

interface Exchange {
  question: string;
  answer: string;
}

/**
 * The exchanges of the transcript in the last user message: each agent line after the first, with the lead's lines
 * that follow it (tool lines end an answer; nobody said them).
 */
export function exchangesOf(messages: readonly TwinMessage[]): Exchange[] {
  const user = [...messages].reverse().find((message) => message.role === 'user');
  const lines = textOf(user?.content)
    .split('\n')
    .map((line) => LINE.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ speaker: match[1]!.toLowerCase(), text: match[2]!.trim() }));
  const exchanges: Exchange[] = [];
  let agentLines = 0;
  let open: Exchange | null = null;
  for (const line of lines) {
    if (line.speaker === 'lead' && open) open.answer = open.answer ? `${open.answer} ${line.text}` : line.text;
    else if (line.speaker === 'agent') {
      agentLines += 1;
      open = agentLines > 1 ? { question: line.text, answer: '' } : null;
      if (open) exchanges.push(open);
    } else if (line.speaker === 'tool') open = null;
  }
  return exchanges.filter((exchange) => exchange.answer !== '');
}

/** The words a property name stands for: split at _ and case changes, lower case, 3+ letters, a trailing s dropped. */
const subjectWords = (key: string) =>
  key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z]+/)
    .map((word) => word.toLowerCase().replace(/s$/, ''))
    .filter((word) => word.length >= 3);

const wordsIn = (text: string) => new Set((text.toLowerCase().match(/[a-z]+/g) ?? []).map((w) => w.replace(/s$/, '')));

/** English month names, lower case, from the runtime's own calendar (the twin keeps no list of the product's). */
const MONTHS = Array.from({ length: 12 }, (_, month) =>
  new Intl.DateTimeFormat('en', { month: 'long', timeZone: 'UTC' }).format(Date.UTC(2000, month, 1)).toLowerCase(),
);
const pad = (number: number) => String(number).padStart(2, '0');

/** The non-null branch of a schema (`anyOf` with a null branch, or a type list with "null"), and whether null is allowed. */
function nonNull(schema: Schema): { schema: Schema; nullable: boolean } {
  if (Array.isArray(schema.anyOf)) {
    const branches = (schema.anyOf as unknown[]).filter(isObject);
    const other = branches.find((branch) => branch.type !== 'null');
    return { schema: other ?? {}, nullable: branches.some((branch) => branch.type === 'null') };
  }
  if (Array.isArray(schema.type)) {
    const types = schema.type as string[];
    return { schema: { ...schema, type: types.find((type) => type !== 'null') }, nullable: types.includes('null') };
  }
  return { schema, nullable: schema.type === 'null' };
}

/** The answer read as the schema's type, or null when it holds none. */
function readAs(schema: Schema, answer: string): unknown {
  const lower = answer.toLowerCase();
  if (/\b(not sure|don'?t know|no idea|rather not)\b/.test(lower)) return null;
  switch (schema.type) {
    case 'number':
    case 'integer': {
      const match = /-?\d[\d,]*(?:\.\d+)?/.exec(answer);
      return match ? Number(match[0].replaceAll(',', '')) : null;
    }
    case 'boolean': {
      const match = /\b(yes|yeah|yep|sure|definitely|absolutely|correct|no|nope|not|never)\b/.exec(lower);
      return match ? !['no', 'nope', 'not', 'never'].includes(match[1]!) : null;
    }
    case 'string': {
      if (Array.isArray(schema.enum))
        return (
          (schema.enum as unknown[]).find(
            (value) =>
              typeof value === 'string' &&
              new RegExp(`\\b${value.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(lower),
          ) ?? null
        );
      if (schema.format === 'date') {
        const iso = /\b(\d{4})-(\d{2})-(\d{2})\b/.exec(answer);
        if (iso) return iso[0];
        const spoken = new RegExp(`\\b(${MONTHS.join('|')})\\s+(\\d{1,2}),?\\s+(\\d{4})\\b`).exec(lower);
        return spoken ? `${spoken[3]}-${pad(MONTHS.indexOf(spoken[1]!) + 1)}-${pad(Number(spoken[2]))}` : null;
      }
      return answer.replace(/[.!?]+$/, '').trim() || null;
    }
    default:
      return null;
  }
}

/**
 * What fills an object with a `value` property (one extracted field, its key the subject): the first exchange whose
 * question holds a word of the key, its answer read as the value's type; confidence 0.9 (0 when nothing was read);
 * evidence the answer.
 */
function fieldOf(key: string, valueSchema: Schema, exchanges: readonly Exchange[]) {
  const words = subjectWords(key);
  const exchange = exchanges.find(({ question }) => {
    const said = wordsIn(question);
    return words.some((word) => said.has(word));
  });
  const { schema } = nonNull(valueSchema);
  const value = exchange ? readAs(schema, exchange.answer) : null;
  return { value, confidence: value === null ? 0 : 0.9, evidence: value === null ? null : exchange!.answer };
}

/**
 * The twin's answer to a schema: every property filled, depth first. An object with a `value` property is a field
 * read from the transcript (fieldOf, and its `confidence` and `evidence`); an integer or number with a maximum is the
 * maximum when the lead spoke at all, else its minimum (or 0); other numbers 0; a string "The OpenAI twin's <key> of
 * <the key of the object holding it>."; an enum its first value; a boolean false; an array empty; a nullable value with nothing to give null.
 */
export function structuredAnswer(schema: unknown, messages: readonly TwinMessage[]): unknown {
  const exchanges = exchangesOf(messages);
  const leadSpoke = exchanges.length > 0;
  const fill = (node: unknown, key: string, parent: string): unknown => {
    if (!isObject(node)) return null;
    const { schema: own, nullable } = nonNull(node);
    if (nullable && own.type === undefined) return null;
    switch (own.type) {
      case 'object': {
        const properties = isObject(own.properties) ? own.properties : {};
        const field = isObject(properties.value) ? fieldOf(key, properties.value, exchanges) : null;
        if (field && field.value === null && !nonNull(properties.value as Schema).nullable)
          field.value = fill(properties.value, 'value', key);
        return Object.fromEntries(
          Object.entries(properties).map(([name, child]) => [
            name,
            field && name in field ? field[name as keyof typeof field] : fill(child, name, key),
          ]),
        );
      }
      case 'array':
        return [];
      case 'integer':
      case 'number':
        if (typeof own.maximum === 'number' && leadSpoke) return own.maximum;
        return typeof own.minimum === 'number' ? own.minimum : 0;
      case 'boolean':
        return false;
      case 'string':
        if (Array.isArray(own.enum)) return own.enum[0] ?? null;
        if (own.format === 'date') return nullable ? null : '2026-01-01';
        return parent ? `The OpenAI twin's ${key} of ${parent}.` : `The OpenAI twin's ${key}.`;
      default:
        return null;
    }
  };
  return fill(schema, '', '');
}

/** The twin's answer made invalid on purpose (a test's control): its first number made a string, else a property added. */
export function offSchema(answer: unknown): unknown {
  let broken = false;
  const walk = (value: unknown): unknown => {
    if (broken) return value;
    if (typeof value === 'number') {
      broken = true;
      return String(value);
    }
    if (Array.isArray(value)) return value.map(walk);
    if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, walk(child)]));
    return value;
  };
  const result = walk(answer);
  return broken || !isObject(result) ? result : { ...result, unexpected: true };
}
