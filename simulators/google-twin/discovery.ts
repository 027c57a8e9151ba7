import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Google's discovery document of the Sheets API v4, as vendored (vendor/discovery/google-sheets/, cut to the methods
 * used), and a checker of JSON values against its schemas: what the twin holds request bodies to, and what the tests
 * hold the adapter's requests and the twin's answers to (docs/features/sheets.md#conformance).
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
}

export interface DiscoveryDocument {
  rootUrl: string;
  servicePath: string;
  revision: string;
  schemas: Record<string, DiscoverySchema>;
  resources: {
    spreadsheets: {
      methods: Record<string, DiscoveryMethod>;
      resources: { values: { methods: Record<string, DiscoveryMethod> } };
    };
  };
  'x-vendored': { repository: string; path: string; commit: string; sha256: string };
}

const here = path.dirname(fileURLToPath(import.meta.url));
export const DISCOVERY_FILE = path.join(here, '../../vendor/discovery/google-sheets/sheets.v4.used.json');

let loaded: DiscoveryDocument | undefined;
export function sheetsDiscovery(): DiscoveryDocument {
  return (loaded ??= JSON.parse(readFileSync(DISCOVERY_FILE, 'utf8')) as DiscoveryDocument);
}

/** A method by its id (`sheets.spreadsheets.values.batchUpdate`). */
export function discoveryMethod(id: string, document = sheetsDiscovery()): DiscoveryMethod {
  const { spreadsheets } = document.resources;
  const method = [...Object.values(spreadsheets.methods), ...Object.values(spreadsheets.resources.values.methods)].find(
    (candidate) => candidate.id === id,
  );
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
