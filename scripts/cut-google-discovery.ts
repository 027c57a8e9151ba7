// Cuts Google's discovery document of the Sheets API v4 down to the methods the google sheet provider calls, and
// writes it under vendor/discovery/google-sheets/ with its provenance (docs/features/sheets.md#conformance).
//
//   tsx scripts/cut-google-discovery.ts <git-dir> <commit> [<repository>]
//
// <git-dir>: a git directory of googleapis/discovery-artifact-manager or a fork of it (the file is
// discoveries/sheets.v4.json); <repository>: its owner/name, recorded in SOURCE (default
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

const FILE = 'discoveries/sheets.v4.json';
export const DISCOVERY_OUTPUT = 'sheets.v4.used.json';
/** The methods the google provider calls, by their discovery path under `resources`. */
export const USED_METHODS = [
  'spreadsheets.get',
  'spreadsheets.batchUpdate',
  'spreadsheets.values.batchUpdate',
  'spreadsheets.values.clear',
  'spreadsheets.values.batchClear',
] as const;

function refsIn(value: Json, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, into);
  else if (value && typeof value === 'object')
    for (const [key, member] of Object.entries(value)) {
      if (key === '$ref' && typeof member === 'string') into.push(member);
      else refsIn(member, into);
    }
  return into;
}

export function cutDiscovery(document: JsonObject, provenance: JsonObject): JsonObject {
  const spreadsheets = (document.resources as JsonObject).spreadsheets as JsonObject;
  const valuesMethods = ((spreadsheets.resources as JsonObject).values as JsonObject).methods as JsonObject;
  for (const name of USED_METHODS) {
    const from = name.startsWith('spreadsheets.values.') ? valuesMethods : (spreadsheets.methods as JsonObject);
    if (!from[name.split('.').at(-1)!]) throw new Error(`no method ${name} in the document`);
  }
  // Rebuilt plainly: resources.spreadsheets.{methods, resources.values.methods}, in the document's own order.
  const pick = (from: JsonObject, names: string[]) =>
    Object.fromEntries(Object.entries(from).filter(([name]) => names.includes(name)));
  const used = (prefix: string) =>
    USED_METHODS.filter(
      (name) => name.startsWith(prefix) && name.split('.').length === prefix.split('.').length + 1,
    ).map((name) => name.split('.').at(-1)!);
  const cutResources: JsonObject = {
    spreadsheets: {
      methods: pick(spreadsheets.methods as JsonObject, used('spreadsheets')),
      resources: {
        values: {
          methods: pick(valuesMethods, used('spreadsheets.values')),
        },
      },
    },
  };
  const schemas = document.schemas as JsonObject;
  const reached = new Set<string>();
  const pending = [...refsIn(cutResources), ...refsIn(document.parameters ?? null)];
  while (pending.length) {
    const name = pending.pop()!;
    if (reached.has(name)) continue;
    if (!schemas[name]) throw new Error(`a reference to nothing: ${name}`);
    reached.add(name);
    pending.push(...refsIn(schemas[name]));
  }
  const cut: JsonObject = {};
  for (const [key, value] of Object.entries(document)) {
    if (key === 'resources') cut.resources = cutResources;
    else if (key === 'schemas')
      cut.schemas = Object.fromEntries(Object.entries(schemas).filter(([name]) => reached.has(name)));
    else cut[key] = value;
  }
  cut['x-vendored'] = provenance;
  return cut;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [gitDir, commit, repository = 'googleapis/discovery-artifact-manager'] = process.argv.slice(2);
  if (!gitDir || !commit) {
    console.error('usage: tsx scripts/cut-google-discovery.ts <git-dir> <commit> [<owner/name>]');
    process.exit(64);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['--git-dir', gitDir, ...args], { maxBuffer: 64 * 1024 * 1024 });
  const source = git('show', `${commit}:${FILE}`);
  const blob = git('rev-parse', `${commit}:${FILE}`).toString().trim();
  const commitDate = git('show', '-s', '--format=%cI', commit).toString().trim();
  const sha256 = createHash('sha256').update(source).digest('hex');
  const document = JSON.parse(source.toString()) as JsonObject;
  const provenance = { repository, path: FILE, commit, commitDate, blob, sha256, revision: document.revision! };
  const out = path.join(projectRoot, 'vendor/discovery/google-sheets');
  mkdirSync(out, { recursive: true });
  const text = `${JSON.stringify(cutDiscovery(document, provenance), null, 2)}\n`;
  writeFileSync(path.join(out, DISCOVERY_OUTPUT), text);
  writeFileSync(path.join(out, 'LICENSE'), git('show', `${commit}:LICENSE`));
  writeFileSync(
    path.join(out, 'SOURCE'),
    [
      `repository: https://github.com/${repository}`,
      `path: ${FILE}`,
      `commit: ${commit} (${commitDate})`,
      `blob: ${blob}`,
      `sha256: ${sha256} (${source.length} bytes)`,
      `revision: ${document.revision as string} (the document's own)`,
      `subset: ${DISCOVERY_OUTPUT}, ${Buffer.byteLength(text)} bytes: the methods ${USED_METHODS.join(', ')},`,
      '  every schema they reach through $ref, and the document members (rootUrl, parameters, auth, ...) unchanged',
      'licence: the repository LICENSE (Apache 2.0), copied beside this file',
      'made by: tsx scripts/cut-google-discovery.ts <git-dir> <commit> [<owner/name>]',
      '',
    ].join('\n'),
  );
  console.log(`wrote vendor/discovery/google-sheets/${DISCOVERY_OUTPUT} (${Buffer.byteLength(text)} bytes)`);
}
