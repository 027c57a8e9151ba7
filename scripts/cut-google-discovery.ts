// Cuts Google's discovery documents down to the methods the product calls (the Sheets API v4) or the Google twin
// serves (the Calendar API v3), and writes them under vendor/discovery/<folder>/ with their provenance
// (docs/features/sheets.md#conformance, docs/features/calendar-twins.md#the-google-calendar-twin).
//
//   tsx scripts/cut-google-discovery.ts <sheets|calendar> <git-dir> <commit> [<repository>]
//
// <git-dir>: a git directory of googleapis/discovery-artifact-manager or a fork of it (the files are
// discoveries/<api>.json); <repository>: its owner/name, recorded in SOURCE (default
// googleapis/discovery-artifact-manager). Deterministic: the same commit gives the same bytes.
//
// Kept: the document's own members (rootUrl, servicePath, parameters, auth, revision, ...), the listed methods
// (unchanged), and every schema they reach through `$ref`, transitively. Everything else is left out.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './stack/paths';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface DiscoveryCut {
  /** The document in discovery-artifact-manager. */
  file: string;
  /** The folder under vendor/discovery/ and the subset's name there. */
  folder: string;
  output: string;
  /** The methods kept, by their discovery path under `resources` (`spreadsheets.values.clear`). */
  methods: readonly string[];
}

export const DISCOVERY_CUTS = {
  sheets: {
    file: 'discoveries/sheets.v4.json',
    folder: 'google-sheets',
    output: 'sheets.v4.used.json',
    methods: [
      'spreadsheets.get',
      'spreadsheets.batchUpdate',
      'spreadsheets.values.batchUpdate',
      'spreadsheets.values.clear',
      'spreadsheets.values.batchClear',
    ],
  },
  calendar: {
    file: 'discoveries/calendar.v3.json',
    folder: 'google-calendar',
    output: 'calendar.v3.used.json',
    methods: ['events.delete', 'events.get', 'events.insert', 'events.list', 'freebusy.query'],
  },
} as const satisfies Record<string, DiscoveryCut>;

function refsIn(value: Json, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, into);
  else if (value && typeof value === 'object')
    for (const [key, member] of Object.entries(value)) {
      if (key === '$ref' && typeof member === 'string') into.push(member);
      else refsIn(member, into);
    }
  return into;
}

/**
 * The resources holding the kept methods, rebuilt plainly (`{ methods, resources }` of each, in the document's own
 * order): a resource without a kept method or a kept descendant is left out.
 */
function cutResources(resources: JsonObject, methods: readonly string[], prefix = ''): JsonObject {
  const cut: JsonObject = {};
  for (const [name, resource] of Object.entries(resources)) {
    const here = `${prefix}${name}`;
    const { methods: own = {}, resources: children } = resource as { methods?: JsonObject; resources?: JsonObject };
    const kept = Object.fromEntries(Object.entries(own).filter(([method]) => methods.includes(`${here}.${method}`)));
    const nested = children ? cutResources(children, methods, `${here}.`) : {};
    if (!Object.keys(kept).length && !Object.keys(nested).length) continue;
    const rebuilt: JsonObject = {};
    if (Object.keys(kept).length) rebuilt.methods = kept;
    if (Object.keys(nested).length) rebuilt.resources = nested;
    cut[name] = rebuilt;
  }
  return cut;
}

export function cutDiscovery(document: JsonObject, methods: readonly string[], provenance: JsonObject): JsonObject {
  const resources = cutResources(document.resources as JsonObject, methods);
  const found = JSON.stringify(resources);
  for (const name of methods) {
    const method = name.split('.').at(-1)!;
    let at: Json | undefined = { resources };
    for (const segment of name.split('.').slice(0, -1))
      at = ((at as JsonObject | undefined)?.resources as JsonObject | undefined)?.[segment];
    if (!((at as JsonObject | undefined)?.methods as JsonObject | undefined)?.[method] || !found)
      throw new Error(`no method ${name} in the document`);
  }
  const schemas = document.schemas as JsonObject;
  const reached = new Set<string>();
  const pending = [...refsIn(resources), ...refsIn(document.parameters ?? null)];
  while (pending.length) {
    const name = pending.pop()!;
    if (reached.has(name)) continue;
    if (!schemas[name]) throw new Error(`a reference to nothing: ${name}`);
    reached.add(name);
    pending.push(...refsIn(schemas[name]));
  }
  const cut: JsonObject = {};
  for (const [key, value] of Object.entries(document)) {
    if (key === 'resources') cut.resources = resources;
    else if (key === 'schemas')
      cut.schemas = Object.fromEntries(Object.entries(schemas).filter(([name]) => reached.has(name)));
    else cut[key] = value;
  }
  cut['x-vendored'] = provenance;
  return cut;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [api, gitDir, commit, repository = 'googleapis/discovery-artifact-manager'] = process.argv.slice(2);
  const chosen = api && api in DISCOVERY_CUTS ? DISCOVERY_CUTS[api as keyof typeof DISCOVERY_CUTS] : undefined;
  if (!chosen || !gitDir || !commit) {
    console.error('usage: tsx scripts/cut-google-discovery.ts <sheets|calendar> <git-dir> <commit> [<owner/name>]');
    process.exit(64);
  }
  const { file, folder, output, methods } = chosen;
  const git = (...args: string[]) =>
    execFileSync('git', ['--git-dir', gitDir, ...args], { maxBuffer: 64 * 1024 * 1024 });
  const source = git('show', `${commit}:${file}`);
  const blob = git('rev-parse', `${commit}:${file}`).toString().trim();
  const commitDate = git('show', '-s', '--format=%cI', commit).toString().trim();
  const sha256 = createHash('sha256').update(source).digest('hex');
  const document = JSON.parse(source.toString()) as JsonObject;
  const provenance = { repository, path: file, commit, commitDate, blob, sha256, revision: document.revision! };
  const out = path.join(projectRoot, 'vendor/discovery', folder);
  mkdirSync(out, { recursive: true });
  const text = `${JSON.stringify(cutDiscovery(document, methods, provenance), null, 2)}\n`;
  writeFileSync(path.join(out, output), text);
  writeFileSync(path.join(out, 'LICENSE'), git('show', `${commit}:LICENSE`));
  const prefix = document.name as string;
  writeFileSync(
    path.join(out, 'SOURCE'),
    [
      `repository: https://github.com/${repository}`,
      `path: ${file}`,
      `commit: ${commit} (${commitDate})`,
      `blob: ${blob}`,
      `sha256: ${sha256} (${source.length} bytes)`,
      `revision: ${document.revision as string} (the document's own)`,
      `subset: ${output}, ${Buffer.byteLength(text)} bytes: the methods ${methods.map((name) => `${prefix === 'sheets' ? '' : `${prefix}.`}${name}`).join(', ')},`,
      '  every schema they reach through $ref, and the document members (rootUrl, parameters, auth, ...) unchanged',
      'licence: the repository LICENSE (Apache 2.0), copied beside this file',
      `made by: tsx scripts/cut-google-discovery.ts ${api} <git-dir> <commit> [<owner/name>]`,
      '',
    ].join('\n'),
  );
  console.log(`wrote vendor/discovery/${folder}/${output} (${Buffer.byteLength(text)} bytes)`);
}
