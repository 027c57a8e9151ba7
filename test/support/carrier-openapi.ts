// Conformance to the carriers' published OpenAPI descriptions (docs/features/carriers/conformance.md): the subsets
// vendored under vendor/openapi/ by scripts/cut-carrier-specs.ts, checked with the JSON Schema validator the tests
// already use (ajv, with ajv-formats). Like test/support/response-check.ts for this API's own answers, every check
// answers a list of problems, empty when what was sent is what the description allows.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ErrorObject, type Format, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'vitest';
import { CUTS } from '../../scripts/cut-carrier-specs';
import { projectRoot } from '../../scripts/stack/paths';

export type Carrier = 'twilio' | 'telnyx';
/** The descriptions vendored under vendor/openapi/: the carriers', OpenAI's chat completions (the model engine's), Meta's WhatsApp and Cal.com's v2 (its twin's). */
export type Described = Carrier | 'openai' | 'meta-whatsapp' | 'calcom';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonObject;
}

/** One operation of a description: `post /calls`, or a webhook by its key (`callHangup`). */
export interface OperationRef {
  method: string;
  /** A path template of `paths` (`/calls/{call_control_id}/actions/hangup`), or `webhooks:<key>`. */
  path: string;
}

export interface CarrierRequest {
  /** The path (and query) the request went to, with or without the server's base path (`/v2`) and host. */
  url?: string;
  /** Query parameters, when no url is given. */
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  /** The Content-Type sent with the body; `application/json` when the body is not a string. */
  contentType?: string;
  /** The body as sent (a string), or already parsed JSON. */
  body?: unknown;
}

export interface CarrierResponse {
  status: number;
  contentType?: string;
  /** The body as sent (a string), or already parsed JSON. */
  body?: unknown;
}

/**
 * Formats the carriers' descriptions use beyond JSON Schema's and ajv-formats'. Twilio's are its own
 * (documented only by name): they are checked where their meaning is plain, and otherwise accepted.
 */
const CARRIER_FORMATS: Record<string, Format> = {
  // RFC 2822 dates as Twilio writes them: "Tue, 31 Aug 2010 20:36:28 +0000".
  'date-time-rfc-2822':
    /^(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), )?\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}(?::\d{2})? (?:[+-]\d{4}|GMT|UT)$/,
  'http-method': /^(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)$/,
  // An http(s) URL. ajv-formats' `url` refuses loopback and private hosts, which every URL of the product the tests
  // hand a twin is (a Call Control application's webhook_event_url).
  url: (value: string) => /^https?:\/\//.test(value) && URL.canParse(value),
  currency: /^[A-Z]{3}$/,
  // A phone number, a SIP address or a client identifier: what Twilio accepts here is not a fixed syntax.
  endpoint: true,
  'phone-number': true,
  twiml: true,
  // Applies to objects (Twilio's subresource_uris, an IncomingPhoneNumber's capabilities), which string formats never
  // check.
  'uri-map': true,
  'phone-number-capabilities': true,
  // Telnyx writes `format: integer` on some integers; the type already says it.
  integer: { type: 'number', validate: (value: number) => Number.isInteger(value) },
  // OpenAI's: a Unix time in whole seconds (`created`).
  unixtime: { type: 'number', validate: (value: number) => Number.isInteger(value) && value >= 0 },
};

/**
 * A query's `name[member]` values read as the members of the declared parameter `name` (an object: deepObject style).
 * Telnyx's consolidated filters (`filter` of ListPhoneNumbers) say "deepObject style" in their description but declare
 * no `style`, and its SDK sends `filter[phone_number]`: read as such, each member checked by the parameter's schema.
 */
function deepObjectsFolded(
  query: Record<string, unknown>,
  declared: readonly { name: string }[],
): Record<string, unknown> {
  const folded: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    const member = /^([^[\]]+)\[([^[\]]+)\]$/.exec(key);
    if (member && declared.some((parameter) => parameter.name === member[1])) {
      const object = (folded[member[1]!] ??= {}) as Record<string, unknown>;
      object[member[2]!] = value;
    } else folded[key] = value;
  }
  return folded;
}

/**
 * OpenAPI 3.1 has no `nullable` (its schemas are JSON Schema 2020-12), yet OpenAI's 3.1 description keeps 3.0's
 * `nullable: true` in places, some beside a `$ref` with no `type` (which ajv refuses to compile), some beside an
 * `enum` without null (`finish_reason` of a chunk, null until the last). What its authors mean is "or null", so in a 3.1
 * description such a schema is read as it: `type` gains "null" and `enum` null, and a schema with no `type` becomes
 * `anyOf: [the schema, { type: 'null' }]`. 3.0 descriptions keep their `nullable` for ajv to read.
 */
function withNullableAsNull(value: Json): Json {
  if (Array.isArray(value)) return value.map(withNullableAsNull);
  if (!value || typeof value !== 'object') return value;
  const copy = Object.fromEntries(Object.entries(value).map(([key, member]) => [key, withNullableAsNull(member)]));
  if (copy.nullable !== true) return copy;
  const { nullable: _nullable, ...schema } = copy;
  if (schema.type === undefined) return { anyOf: [schema, { type: 'null' }] };
  return {
    ...schema,
    type: [schema.type, 'null'].flat(),
    ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}),
  };
}

/**
 * A 3.0 description's `nullable: true` without a `type` (Twilio's `encryption_details` of a recording: any value, or
 * null), which ajv refuses to compile: read as what it says, the schema without `nullable` or null. Typed ones are left
 * to ajv, which reads `nullable` beside a `type`.
 */
function withUntypedNullableAsNull(value: Json): Json {
  if (Array.isArray(value)) return value.map(withUntypedNullableAsNull);
  if (!value || typeof value !== 'object') return value;
  const copy = Object.fromEntries(
    Object.entries(value).map(([key, member]) => [key, withUntypedNullableAsNull(member)]),
  );
  if (copy.nullable !== true || copy.type !== undefined) return copy;
  const { nullable: _nullable, ...schema } = copy;
  return { anyOf: [schema, { type: 'null' }] };
}

/**
 * Where a carrier's answers, its own published examples first, differ from its description, its responses are read
 * as it writes them. Each entry says why; requests keep the description's word.
 */
const RESPONSE_FORMATS: Partial<Record<string, Record<string, Format>>> = {
  // Twilio declares `uri`, `first_page_uri`, `next_page_uri` and `previous_page_uri` of a page `format: uri`, and
  // answers them relative to https://api.twilio.com, as every example of its listing does.
  twilio: { uri: fullFormats['uri-reference'] },
};

/** Every format a description uses, with where. */
export function formatsUsed(document: Json, at = '#'): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (value: Json, where: string) => {
    if (Array.isArray(value)) value.forEach((item, index) => walk(item, `${where}/${index}`));
    else if (value && typeof value === 'object') {
      // A schema's `format` (not a property named "format" in a `properties` map).
      if (typeof value.format === 'string' && !where.endsWith('/properties')) found.set(value.format, where);
      // An example is a value, not a schema: its `format` member is data (Telnyx's StartRecordingRequest: "wav").
      for (const [key, member] of Object.entries(value))
        if (key !== 'example' && !(key === 'examples' && !Array.isArray(member))) walk(member, `${where}/${key}`);
    }
  };
  walk(document, at);
  return found;
}

/** How a value is read: JSON as sent, text-borne (form fields, parameters), or a carrier's answer. */
type Reading = 'json' | 'text' | 'answer';

const encodePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

function describeError(where: string, error: ErrorObject): string {
  const at = `${where}${error.instancePath}`;
  if (error.keyword === 'enum')
    return `${at} ${error.message}: ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  if (error.keyword === 'additionalProperties')
    return `${at} has ${(error.params as { additionalProperty: string }).additionalProperty}, which is not allowed`;
  return `${at} ${error.message}`;
}

const mediaTypeOf = (contentType: string | undefined) => contentType?.split(';')[0]!.trim().toLowerCase();

/** A form-encoded body as the object a schema checks: a repeated name gives an array of its values. */
function formObject(body: string): Record<string, string | string[]> {
  const object: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const before = object[name];
    object[name] = before === undefined ? value : [before, value].flat();
  }
  return object;
}

export class CarrierDescription {
  readonly document: JsonObject;
  private readonly id: string;
  /** Checks JSON as it is. */
  private readonly strict: Ajv;
  /** Checks text-borne values (form fields, query and path parameters, headers): "10" may be an integer, a single value an array. */
  private readonly coercing: Ajv;
  /** Checks the carrier's answers: JSON as it is, with RESPONSE_FORMATS. */
  private readonly answers: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(
    readonly carrier: string,
    document: JsonObject,
  ) {
    this.document = document;
    this.id = `https://carrier-descriptions.invalid/${carrier}.json`;
    const version = document.openapi as string;
    const make = (coerce: boolean, formats: Record<string, Format> = {}) => {
      // OpenAPI 3.1 schemas are JSON Schema 2020-12; 3.0's are a draft-04/07 dialect (with `nullable`, which ajv
      // reads with `type`). The description is checked as OpenAPI by its own validator (the tests), not here; its
      // extension keywords (x-*, example, discriminator without the mapping ajv insists on) are not for ajv.
      const options = {
        allErrors: true,
        strictSchema: false,
        validateSchema: false,
        coerceTypes: coerce ? ('array' as const) : false,
        logger: false as const,
      };
      const ajv = version.startsWith('3.1') ? new Ajv2020(options) : new Ajv(options);
      addFormats(ajv);
      for (const [name, format] of Object.entries({ ...CARRIER_FORMATS, ...formats })) ajv.addFormat(name, format);
      ajv.addSchema(
        (version.startsWith('3.1') ? withNullableAsNull(document) : withUntypedNullableAsNull(document)) as JsonObject,
        this.id,
      );
      return ajv;
    };
    this.strict = make(false);
    this.coercing = make(true);
    this.answers = make(false, RESPONSE_FORMATS[carrier]);
  }

  /** The `$ref`s of the description that lead nowhere in it: none, or the cut left something out. */
  danglingRefs(): string[] {
    const refs = JSON.stringify(this.document).match(/"\$ref":"[^"]+"/g) ?? [];
    return [...new Set(refs.map((ref) => ref.slice('"$ref":"'.length, -1)))].filter(
      (ref) => !ref.startsWith('#/') || this.resolve({ $ref: ref }) === undefined,
    );
  }

  /** The formats the description uses that no validator here knows (they would be ignored): none, or a test fails. */
  unknownFormats(): string[] {
    return [...formatsUsed(this.document).keys()].filter((name) => !this.strict.formats[name]);
  }

  private validator(pointer: string, reading: Reading): ValidateFunction {
    const key = `${reading}:${pointer}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      const ajv = { json: this.strict, text: this.coercing, answer: this.answers }[reading];
      validate = ajv.compile({ $ref: `${this.id}#${pointer}` });
      this.compiled.set(key, validate);
    }
    return validate;
  }

  /** What is wrong with a value against the schema at a JSON pointer of the description (`/components/schemas/CallResource`). */
  schemaProblems(pointer: string, value: unknown, where = 'value'): string[] {
    return this.check(pointer, structuredClone(value), where, 'json');
  }

  private check(pointer: string, value: unknown, where: string, reading: Reading): string[] {
    const validate = this.validator(pointer, reading);
    return validate(value) ? [] : (validate.errors ?? []).map((error) => describeError(where, error));
  }

  /** A value of the document by JSON pointer, following `$ref`s to components. */
  private resolve(value: Json | undefined): Json | undefined {
    let current = value;
    for (let hops = 0; current && typeof current === 'object' && !Array.isArray(current); hops++) {
      const ref = current.$ref;
      if (typeof ref !== 'string') break;
      if (hops > 20 || !ref.startsWith('#/')) throw new Error(`cannot follow ${ref}`);
      current = ref
        .slice(2)
        .split('/')
        .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<Json | undefined>((node, segment) => (node as JsonObject | undefined)?.[segment], this.document);
    }
    return current;
  }

  /** The operation object and its JSON pointer. */
  private operation(ref: OperationRef): { pointer: string; operation: JsonObject; item: JsonObject } {
    const method = ref.method.toLowerCase();
    const [collection, key] = ref.path.startsWith('webhooks:')
      ? ['webhooks', ref.path.slice('webhooks:'.length)]
      : ['paths', ref.path];
    const item = (this.document[collection] as Record<string, JsonObject> | undefined)?.[key];
    const operation = item?.[method] as JsonObject | undefined;
    if (!item || !operation) throw new Error(`${this.carrier}: no operation ${method.toUpperCase()} ${ref.path}`);
    return { pointer: `/${collection}/${encodePointer(key)}/${method}`, operation, item };
  }

  /** The operation's parameters (its path item's too), each with the pointer of its schema. */
  private parameters(ref: OperationRef): (Parameter & { schemaPointer: string })[] {
    const { pointer } = this.operation(ref);
    const itemPointer = pointer.slice(0, pointer.lastIndexOf('/'));
    const { operation, item } = this.operation(ref);
    const collect = (list: Json | undefined, at: string) =>
      ((list as Json[] | undefined) ?? []).map((entry, index) => {
        const ref = (entry as JsonObject).$ref;
        const parameterPointer = typeof ref === 'string' ? ref.slice(1) : `${at}/parameters/${index}`;
        return { ...(this.resolve(entry) as unknown as Parameter), schemaPointer: `${parameterPointer}/schema` };
      });
    const byKey = new Map<string, Parameter & { schemaPointer: string }>();
    for (const parameter of [...collect(item.parameters, itemPointer), ...collect(operation.parameters, pointer)])
      byKey.set(`${parameter.in}:${parameter.name}`, parameter);
    return [...byKey.values()];
  }

  /** The base paths of the description's servers (`/v2` of `https://api.telnyx.com/v2`), longest first. */
  private basePaths(): string[] {
    const servers = (this.document.servers as { url: string }[] | undefined) ?? [];
    return servers
      .map((server) => new URL(server.url, 'https://host.invalid').pathname.replace(/\/$/, ''))
      .filter(Boolean)
      .sort((a, b) => b.length - a.length);
  }

  /** Path parameters read from a concrete path by the template; null when the path is not the template's. */
  private pathParameters(template: string, pathname: string): Record<string, string> | null {
    const names: string[] = [];
    const pattern = template
      .split(/(\{[^}]+\})/)
      .map((part) => {
        const name = /^\{([^}]+)\}$/.exec(part)?.[1];
        if (name) {
          names.push(name);
          return '([^/]+)';
        }
        return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('');
    for (const base of ['', ...this.basePaths()]) {
      const match = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${pattern}$`).exec(pathname);
      if (match) return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(match[index + 1]!)]));
    }
    return null;
  }

  private parameterProblems(
    ref: OperationRef,
    given: Record<'path' | 'query' | 'header', Record<string, unknown>>,
    withPath: boolean,
  ) {
    const problems: string[] = [];
    const declared = this.parameters(ref);
    for (const place of withPath ? (['path', 'query', 'header'] as const) : (['query', 'header'] as const)) {
      const ofPlace = declared.filter((parameter) => parameter.in === place);
      const values = place === 'query' ? deepObjectsFolded(given.query, ofPlace) : given[place];
      const lookup = (name: string) =>
        place === 'header'
          ? Object.entries(values).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1]
          : values[name];
      for (const parameter of ofPlace) {
        const value = lookup(parameter.name);
        if (value === undefined) {
          if (parameter.required) problems.push(`${place} parameter ${parameter.name} is required`);
          continue;
        }
        if (parameter.schema)
          problems.push(
            ...this.check(parameter.schemaPointer, structuredClone(value), `${place}.${parameter.name}`, 'text'),
          );
      }
      // Headers carry much besides parameters; an undeclared query parameter is a mistake of the sender.
      if (place === 'query')
        for (const name of Object.keys(values))
          if (!ofPlace.some((parameter) => parameter.name === name))
            problems.push(`query parameter ${name} is not declared by the operation`);
    }
    return problems;
  }

  /** The top-level members a schema declares (through $ref, allOf, oneOf and anyOf); null when it takes any. */
  private declaredMembers(schema: Json | undefined): Set<string> | null {
    const resolved = this.resolve(schema) as JsonObject | undefined;
    if (!resolved || typeof resolved !== 'object') return null;
    if (resolved.additionalProperties !== undefined && resolved.additionalProperties !== false) return null;
    const names = new Set(Object.keys((resolved.properties as JsonObject | undefined) ?? {}));
    for (const keyword of ['allOf', 'oneOf', 'anyOf'])
      for (const member of (resolved[keyword] as Json[] | undefined) ?? []) {
        const more = this.declaredMembers(member);
        if (more === null) return keyword === 'allOf' ? null : names;
        for (const name of more) names.add(name);
      }
    return resolved.properties || resolved.allOf || resolved.oneOf || resolved.anyOf ? names : null;
  }

  /**
   * What is wrong with a request to an operation: its path, query and header parameters, and its body against
   * the schema of the media type it was sent as (form-encoded fields are read as text, as a server reads them:
   * `Timeout=30` is an integer, a repeated `StatusCallbackEvent` an array). A body member the schema does not
   * declare is reported too: carriers ignore unknown fields, so a misspelt one would otherwise pass silently.
   */
  requestProblems(ref: OperationRef, request: CarrierRequest): string[] {
    const { pointer, operation } = this.operation(ref);
    const problems: string[] = [];
    const url = request.url ? new URL(request.url, 'https://host.invalid') : undefined;
    let pathValues: Record<string, string> = {};
    if (url && !ref.path.startsWith('webhooks:')) {
      const read = this.pathParameters(ref.path, url.pathname);
      if (!read) return [`${url.pathname} is not a path of ${ref.path}`];
      pathValues = read;
    }
    const query: Record<string, string | string[]> = url
      ? formObject(url.search.slice(1))
      : structuredClone(request.query ?? {});
    // Without a url, the path is not checked; the query, the headers and the body are.
    problems.push(
      ...this.parameterProblems(ref, { path: pathValues, query, header: request.headers ?? {} }, url !== undefined),
    );

    const requestBody = this.resolve(operation.requestBody) as JsonObject | undefined;
    const bodyPointer =
      typeof (operation.requestBody as JsonObject | undefined)?.$ref === 'string'
        ? ((operation.requestBody as JsonObject).$ref as string).slice(1)
        : `${pointer}/requestBody`;
    if (request.body === undefined) {
      if (requestBody?.required) problems.push('a body is required');
      return problems;
    }
    if (!requestBody) return [...problems, 'a body was sent where the operation declares none'];
    const content = requestBody.content as Record<string, JsonObject>;
    const mediaType = mediaTypeOf(request.contentType) ?? 'application/json';
    if (!content[mediaType])
      return [...problems, `Content-Type ${mediaType} is not one of ${Object.keys(content).join(', ')}`];
    const schemaPointer = `${bodyPointer}/content/${encodePointer(mediaType)}/schema`;
    let body: unknown;
    if (mediaType === 'application/x-www-form-urlencoded') {
      if (typeof request.body !== 'string') return [...problems, 'a form-encoded body must be sent as a string'];
      body = formObject(request.body);
    } else if (typeof request.body === 'string') {
      try {
        body = JSON.parse(request.body);
      } catch {
        return [...problems, `the body is not JSON: ${request.body.slice(0, 200)}`];
      }
    } else body = structuredClone(request.body);
    const form = mediaType === 'application/x-www-form-urlencoded';
    problems.push(...this.check(schemaPointer, body, 'body', form ? 'text' : 'json'));
    const members = this.declaredMembers(content[mediaType]!.schema);
    if (members && body && typeof body === 'object' && !Array.isArray(body))
      for (const name of Object.keys(body)) if (!members.has(name)) problems.push(`body/${name} is not declared`);
    return problems;
  }

  /** What is wrong with a response: a status the operation does not declare, another media type, a body its schema refuses. */
  responseProblems(ref: OperationRef, response: CarrierResponse): string[] {
    const { pointer, operation } = this.operation(ref);
    const responses = operation.responses as Record<string, Json>;
    const status = String(response.status);
    const key = [status, `${status[0]}XX`, 'default'].find((candidate) => responses[candidate] !== undefined);
    if (!key) return [`status ${status} is not declared (declared: ${Object.keys(responses).join(', ')})`];
    const declared = this.resolve(responses[key]) as JsonObject;
    const responseRef = (responses[key] as JsonObject).$ref;
    const responsePointer = typeof responseRef === 'string' ? responseRef.slice(1) : `${pointer}/responses/${key}`;
    const content = declared.content as Record<string, JsonObject> | undefined;
    if (!content) return response.body === undefined ? [] : ['a body was sent where the status declares none'];
    if (response.body === undefined) return ['no body was sent where the status declares one'];
    const mediaType = mediaTypeOf(response.contentType) ?? 'application/json';
    if (!content[mediaType]) return [`Content-Type ${mediaType} is not one of ${Object.keys(content).join(', ')}`];
    let body = response.body;
    if (typeof response.body === 'string' && mediaType.endsWith('json')) {
      try {
        body = JSON.parse(response.body);
      } catch {
        return [`the body is not JSON: ${response.body.slice(0, 200)}`];
      }
    }
    if (!content[mediaType]!.schema) return [];
    const schemaPointer = `${responsePointer}/content/${encodePointer(mediaType)}/schema`;
    return this.check(schemaPointer, structuredClone(body), 'body', 'answer');
  }

  /** What is wrong with a webhook the carrier sends (a key of the description's `webhooks`): its headers and body. */
  webhookProblems(name: string, delivery: Omit<CarrierRequest, 'url' | 'query'>): string[] {
    return this.requestProblems({ method: 'post', path: `webhooks:${name}` }, delivery);
  }
}

/**
 * The description's own examples (of request bodies, responses and schemas), each run through its checker: the
 * problems found, by example. A description's examples are what its authors say it allows, so each problem is
 * either a quirk of the description or a fault of the checker; the tests list the quirks they accept.
 */
export function ownExampleProblems(description: CarrierDescription): Record<string, string[]> {
  const document = description.document as Record<string, any>;
  const found: Record<string, string[]> = {};
  const note = (name: string, problems: string[]) => {
    if (problems.length) found[name] = problems;
  };
  const examplesOf = (media: Record<string, any>): [string, unknown][] => [
    ...Object.entries<Record<string, any>>(media.examples ?? {}).map(
      ([name, example]) =>
        [name, example.$ref ? document.components.examples[example.$ref.split('/').pop()].value : example.value] as [
          string,
          unknown,
        ],
    ),
    ...(media.example !== undefined ? [['example', media.example] as [string, unknown]] : []),
  ];
  const operations = [
    ...Object.entries<Record<string, any>>(document.paths).map(([template, item]) => [template, item] as const),
    ...Object.entries<Record<string, any>>(document.webhooks ?? {}).map(
      ([key, item]) => [`webhooks:${key}`, item] as const,
    ),
  ];
  for (const [template, item] of operations) {
    for (const [method, operation] of Object.entries<Record<string, any>>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const ref = { method, path: template };
      for (const [mediaType, media] of Object.entries<Record<string, any>>(operation.requestBody?.content ?? {}))
        for (const [name, value] of examplesOf(media)) {
          const form = mediaType === 'application/x-www-form-urlencoded';
          const body = form
            ? new URLSearchParams(
                Object.entries(value as Record<string, unknown>).flatMap(([field, member]) =>
                  [member].flat().map((one): [string, string] => [field, String(one)]),
                ),
              ).toString()
            : value;
          // Only the body: the examples carry no path, and signatures are not the description's to give.
          const problems = description
            .requestProblems(ref, { contentType: mediaType, body })
            .filter((problem) => !problem.startsWith('header parameter'));
          note(`${method.toUpperCase()} ${template} request ${name}`, problems);
        }
      for (const [status, response] of Object.entries<Record<string, any>>(operation.responses ?? {})) {
        const declared = response.$ref ? document.components.responses[response.$ref.split('/').pop()] : response;
        for (const [mediaType, media] of Object.entries<Record<string, any>>(declared.content ?? {}))
          for (const [name, value] of examplesOf(media))
            note(
              `${method.toUpperCase()} ${template} ${status} ${name}`,
              description.responseProblems(ref, {
                status: status === 'default' ? 599 : Number(status),
                contentType: mediaType,
                body: value,
              }),
            );
      }
    }
  }
  for (const [name, schema] of Object.entries<Record<string, any>>(document.components.schemas ?? {}))
    if (schema.example !== undefined)
      note(`schema ${name}`, description.schemaProblems(`/components/schemas/${encodePointer(name)}`, schema.example));
  return found;
}

const loaded = new Map<Described, CarrierDescription>();

/** The vendored subset of a provider's description (vendor/openapi/<carrier>/). */
export function carrierDescription(carrier: Described): CarrierDescription {
  let description = loaded.get(carrier);
  if (!description) {
    const file = path.join(projectRoot, 'vendor', 'openapi', carrier, CUTS[carrier]!.output);
    description = new CarrierDescription(carrier, JSON.parse(readFileSync(file, 'utf8')) as JsonObject);
    loaded.set(carrier, description);
  }
  return description;
}

/**
 * A vendored description is a valid OpenAPI document of its version, the validator refuses it once `breakIt` spoils
 * it (so the check can fail), and it names where it was cut from (repository, path, commit).
 */
export async function expectValidDescription(
  description: CarrierDescription,
  vendored: { openapi: string; repository: string; path: string },
  breakIt: (document: Record<string, any>) => void,
): Promise<void> {
  const document = description.document as Record<string, any>;
  expect(document.openapi).toBe(vendored.openapi);
  const result = await new Validator().validate(structuredClone(document) as never);
  expect(result.errors ?? []).toEqual([]);
  expect(result.valid).toBe(true);
  const broken = structuredClone(document);
  breakIt(broken);
  expect((await new Validator().validate(broken as never)).valid).toBe(false);
  expect(document.info['x-vendored']).toMatchObject({
    repository: vendored.repository,
    path: vendored.path,
    commit: expect.stringMatching(/^[0-9a-f]{40}$/),
  });
}
