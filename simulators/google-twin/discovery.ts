import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Google's discovery documents of the Sheets API v4 and the Calendar API v3, as vendored (vendor/discovery/, each cut
 * to the methods used), and a checker of JSON values against their schemas: what the twin holds request bodies to, and
 * what the tests hold the adapters' requests and the twin's answers to (docs/features/sheets.md#conformance,
 * docs/features/calendar-twins.md#the-google-calendar-twin).
 */
export interface DiscoverySchema {
  id?: string;
  type?: string;
  $ref?: string;
  format?: string;
  enum?: string[];
  items?: DiscoverySchema;
  properties?: Record<string, DiscoverySchema>;
  additionalProperties?: DiscoverySchema;
}

export interface DiscoveryMethod {
  id: string;
  httpMethod: string;
  path: string;
  flatPath?: string;
  parameters?: Record<
    string,
    { location: string; required?: boolean; type: string; repeated?: boolean; enum?: string[] }
  >;
  request?: { $ref: string };
  response?: { $ref: string };
  scopes?: string[];
}

export interface DiscoveryResource {
  methods?: Record<string, DiscoveryMethod>;
  resources?: Record<string, DiscoveryResource>;
}

export interface DiscoveryDocument {
  rootUrl: string;
  servicePath: string;
  revision: string;
  schemas: Record<string, DiscoverySchema>;
  resources: Record<string, DiscoveryResource>;
  auth: { oauth2: { scopes: Record<string, { description: string }> } };
  'x-vendored': { repository: string; path: string; commit: string; sha256: string };
}

const here = path.dirname(fileURLToPath(import.meta.url));
export const DISCOVERY_FILE = path.join(here, '../../vendor/discovery/google-sheets/sheets.v4.used.json');
export const CALENDAR_DISCOVERY_FILE = path.join(here, '../../vendor/discovery/google-calendar/calendar.v3.used.json');

const loaded = new Map<string, DiscoveryDocument>();
const load = (file: string) => {
  let document = loaded.get(file);
  if (!document) loaded.set(file, (document = JSON.parse(readFileSync(file, 'utf8')) as DiscoveryDocument));
  return document;
};
export const sheetsDiscovery = () => load(DISCOVERY_FILE);
export const calendarDiscovery = () => load(CALENDAR_DISCOVERY_FILE);

function methodsOf(resources: Record<string, DiscoveryResource>): DiscoveryMethod[] {
  return Object.values(resources).flatMap((resource) => [
    ...Object.values(resource.methods ?? {}),
    ...methodsOf(resource.resources ?? {}),
  ]);
}

/** A method by its id (`sheets.spreadsheets.values.batchUpdate`, `calendar.events.insert`), in the document of its API. */
export function discoveryMethod(
  id: string,
  document = id.startsWith('calendar.') ? calendarDiscovery() : sheetsDiscovery(),
): DiscoveryMethod {
  const method = methodsOf(document.resources).find((candidate) => candidate.id === id);
  if (!method) throw new Error(`no method ${id} in the vendored discovery document`);
  return method;
}

const INT32 = { min: -2_147_483_648, max: 2_147_483_647 };

/**
 * Where `value` departs from the schema (named `schemaName` or given): unknown members, wrong types, values outside an
 * enum, integers outside int32. Discovery schemas mark nothing required: absent members are not faults. Each problem
 * is `path: what`.
 */
export function schemaProblems(
  value: unknown,
  schema: DiscoverySchema | string,
  document = sheetsDiscovery(),
  at = '',
  problems: string[] = [],
): string[] {
  const resolved = typeof schema === 'string' ? { $ref: schema } : schema;
  const target = resolved.$ref ? document.schemas[resolved.$ref] : resolved;
  if (!target) {
    problems.push(`${at || '(root)'}: no schema ${resolved.$ref}`);
    return problems;
  }
  const where = at || '(root)';
  if (value === null || value === undefined) return problems;
  switch (target.type) {
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) {
        problems.push(`${where}: not an object`);
        break;
      }
      for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
        const property = target.properties?.[key] ?? target.additionalProperties;
        if (!property) problems.push(`${at ? `${at}.` : ''}${key}: not a member of ${target.id ?? 'the object'}`);
        else schemaProblems(member, property, document, at ? `${at}.${key}` : key, problems);
      }
      break;
    }
    case 'array':
      if (!Array.isArray(value)) problems.push(`${where}: not an array`);
      else
        value.forEach((item, index) => schemaProblems(item, target.items ?? {}, document, `${at}[${index}]`, problems));
      break;
    case 'string':
      if (typeof value !== 'string') problems.push(`${where}: not a string`);
      else if (target.enum && !target.enum.includes(value))
        problems.push(`${where}: ${value} is not one of ${target.enum.join(', ')}`);
      else if (target.format === 'int64' && !/^-?\d+$/.test(value)) problems.push(`${where}: not an int64`);
      break;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) problems.push(`${where}: not an integer`);
      else if (target.format === 'int32' && (value < INT32.min || value > INT32.max))
        problems.push(`${where}: outside int32`);
      break;
    case 'number':
      if (typeof value !== 'number') problems.push(`${where}: not a number`);
      break;
    case 'boolean':
      if (typeof value !== 'boolean') problems.push(`${where}: not a boolean`);
      break;
    case 'any':
    case undefined:
      break;
    default:
      problems.push(`${where}: unknown schema type ${target.type}`);
  }
  return problems;
}
