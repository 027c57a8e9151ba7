// Cuts the carriers' published OpenAPI descriptions down to what the voice adapters use, and writes them under
// vendor/openapi/<carrier>/ with their provenance (docs/features/carriers/conformance.md).
//
//   tsx scripts/cut-carrier-specs.ts <carrier> <git-dir> [<commit>]
//
// <carrier> is `twilio`, `telnyx` or `openai` (the chat completions API, not a carrier); <git-dir> is a git directory of the carrier's repository (the fetch tool of
// the agents' sessions brings one as a bare snapshot; a plain `git clone` works too: pass its `.git`); <commit>
// defaults to the newest commit whose description file is whole there. Deterministic: the same source commit
// gives the same bytes, so a re-run on a newer commit shows, in `git diff vendor/`, what the carrier changed.
//
// What is kept: the listed operations (with their path item's own members: parameters, servers, description),
// the listed webhooks, every component they reach through `$ref` (transitively, references left as they are),
// the security schemes the kept operations and the document ask for, the servers and the info block (to which
// `x-vendored` adds the provenance). Everything else of the description is left out.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { projectRoot } from './stack/paths';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Cut {
  /** GitHub owner/name of the published description. */
  repository: string;
  /** Candidates for the description file in that repository, the preferred first. */
  paths: readonly string[];
  /** The subset's file name under vendor/openapi/<carrier>/. */
  output: string;
  /** [method, path template] of every operation kept. */
  operations: readonly (readonly [string, string])[];
  /** Keys of the description's top-level `webhooks` kept (OpenAPI 3.1). */
  webhooks: readonly string[];
  /** The repository's licence file, copied beside the subset when the repository has one. */
  licenceFile: string;
  /** Who uses the subset, for its README's title (default: the voice adapters use). */
  usedBy?: string;
}

export const CUTS: Record<string, Cut> = {
  twilio: {
    repository: 'twilio/twilio-oai',
    paths: ['spec/json/twilio_api_v2010.json'],
    output: 'twilio_api_v2010.calls.json',
    operations: [
      ['post', '/2010-04-01/Accounts/{AccountSid}/Calls.json'],
      ['get', '/2010-04-01/Accounts/{AccountSid}/Calls.json'],
      ['get', '/2010-04-01/Accounts/{AccountSid}/Calls/{Sid}.json'],
      ['post', '/2010-04-01/Accounts/{AccountSid}/Calls/{Sid}.json'],
      // Inbound calls: the account's numbers listed by PhoneNumber, and one pointed at the product (VoiceUrl,
      // StatusCallback): docs/features/carriers/inbound.md.
      ['get', '/2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers.json'],
      ['get', '/2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers/{Sid}.json'],
      ['post', '/2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers/{Sid}.json'],
      // Recordings (docs/features/recordings.md): one started on an answered call, read, and deleted at retention.
      ['post', '/2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}/Recordings.json'],
      ['get', '/2010-04-01/Accounts/{AccountSid}/Recordings/{Sid}.json'],
      ['delete', '/2010-04-01/Accounts/{AccountSid}/Recordings/{Sid}.json'],
    ],
    webhooks: [],
    licenceFile: 'LICENSE',
  },
  telnyx: {
    repository: 'team-telnyx/openapi',
    // spec3.json and spec3.yml are generated from the same source; the YAML is the smaller of the two.
    paths: ['openapi/spec3.yml', 'openapi/spec3.json'],
    output: 'telnyx_spec3.calls.json',
    operations: [
      // TeXML, Telnyx's TwiML-compatible flavour.
      ['post', '/texml/Accounts/{account_sid}/Calls'],
      ['get', '/texml/Accounts/{account_sid}/Calls'],
      ['get', '/texml/Accounts/{account_sid}/Calls/{call_sid}'],
      ['post', '/texml/Accounts/{account_sid}/Calls/{call_sid}'],
      // Call Control.
      ['post', '/calls'],
      ['get', '/calls/{call_control_id}'],
      ['post', '/calls/{call_control_id}/actions/hangup'],
      // The commands of a scripted conversation: speak, listen (real-time transcription; Call Control's gathers
      // collect DTMF only), and a DTMF gather with a spoken prompt.
      ['post', '/calls/{call_control_id}/actions/speak'],
      ['post', '/calls/{call_control_id}/actions/transcription_start'],
      ['post', '/calls/{call_control_id}/actions/transcription_stop'],
      ['post', '/calls/{call_control_id}/actions/gather_using_speak'],
      // ConversationRelay on Call Control (docs/features/conversation/relay.md#telnyx), and the transfer of a
      // conversation to a human (docs/features/conversation/tools.md#transfer_to_human).
      ['post', '/calls/{call_control_id}/actions/conversation_relay_start'],
      ['post', '/calls/{call_control_id}/actions/transfer'],
      // Inbound calls (docs/features/carriers/inbound.md): the account's numbers listed by number and put on the
      // connection's Call Control application, whose webhook URL is pointed at the product; a call to one answered.
      ['get', '/phone_numbers'],
      ['patch', '/phone_numbers/{id}'],
      ['get', '/call_control_applications/{id}'],
      ['patch', '/call_control_applications/{id}'],
      ['post', '/calls/{call_control_id}/actions/answer'],
      // Play audio URL, implemented by the Telnyx twin as described: its overlay mixes a file only over another file,
      // never under speech, which is why the product plays no background audio (docs/features/background-audio.md#on-a-call).
      ['post', '/calls/{call_control_id}/actions/playback_start'],
      // Recordings (docs/features/recordings.md): started on an answered call, found by the call (Telnyx answers
      // no recording id to record_start nor in call.recording.saved), read, and deleted at retention.
      ['post', '/calls/{call_control_id}/actions/record_start'],
      ['get', '/recordings'],
      ['get', '/recordings/{recording_id}'],
      ['delete', '/recordings/{recording_id}'],
    ],
    // The Call Control webhooks of an outbound call's life and of answering-machine detection.
    webhooks: [
      'callInitiated',
      'callAnswered',
      'callHangup',
      'callMachineDetectionEnded',
      'callMachineGreetingEnded',
      'callMachinePremiumDetectionEnded',
      'callMachinePremiumGreetingEnded',
      'callSpeakStarted',
      'callSpeakEnded',
      'transcription',
      'callGatherEnded',
      'callConversationEnded',
      'callBridged',
      'callPlaybackStarted',
      'callPlaybackEnded',
      'callRecordingSaved',
    ],
    licenceFile: 'LICENSE',
  },
  // Not a carrier: Meta's WhatsApp Cloud API (Graph API v23.0), what the WhatsApp Graph client and the Meta twin speak
  // (docs/features/whatsapp/meta-cloud-api.md), held to its description with the same checker.
  'meta-whatsapp': {
    repository: 'facebook/openapi',
    paths: ['business-messaging-api_v23.0.yaml'],
    output: 'business-messaging-api_v23.0.whatsapp.json',
    operations: [
      ['post', '/{Version}/{Phone-Number-ID}/messages'],
      ['post', '/{Version}/{WABA-ID}/message_templates'],
      ['get', '/{Version}/{TEMPLATE_ID}'],
      ['post', '/whatsapp/webhooks'],
    ],
    webhooks: [],
    licenceFile: 'LICENSE',
    usedBy: 'the WhatsApp Graph client and the Meta twin use',
  },
  // Not a carrier: the chat completions API the model dialogue engine speaks (docs/features/conversation/model-engine.md), held
  // to its description the same way, with the same checker.
  openai: {
    repository: 'openai/openai-openapi',
    paths: ['openapi.json', 'openapi.yaml'],
    output: 'openai.chat-completions.json',
    operations: [['post', '/chat/completions']],
    webhooks: [],
    licenceFile: 'LICENSE',
    usedBy: 'the model dialogue engine uses',
  },
  // Not a carrier: Cal.com's API v2, what the Cal.com twin serves (docs/features/calendar-twins.md#the-calcom-twin).
  // Cal.com publishes it in its repositories as docs/api-reference/v2/openapi.json; calcom/companion (Cal.com's own,
  // small enough to fetch) carries the same file for its CLI.
  calcom: {
    repository: 'calcom/companion',
    paths: ['docs/api-reference/v2/openapi.json'],
    output: 'calcom-v2.slots-bookings.json',
    operations: [
      ['get', '/v2/slots'],
      ['post', '/v2/slots/reservations'],
      ['get', '/v2/slots/reservations/{uid}'],
      ['delete', '/v2/slots/reservations/{uid}'],
      ['post', '/v2/bookings'],
      ['get', '/v2/bookings'],
      ['get', '/v2/bookings/{bookingUid}'],
    ],
    webhooks: [],
    licenceFile: 'LICENSE',
    usedBy: 'the Cal.com twin serves',
  },
};

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

const git = (gitDir: string, ...args: string[]) =>
  execFileSync('git', ['--git-dir', gitDir, ...args], {
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });

function blobExists(gitDir: string, commit: string, file: string): boolean {
  try {
    git(gitDir, 'cat-file', '-e', `${commit}:${file}`);
    return true;
  } catch {
    return false;
  }
}

/** The newest commit, from `start` back, at which one of the candidate files is whole in this git directory. */
function findSource(gitDir: string, start: string, candidates: readonly string[]) {
  const commits = git(gitDir, 'rev-list', start, '--', ...candidates)
    .toString()
    .split('\n')
    .filter(Boolean);
  for (const commit of commits) {
    for (const file of candidates) if (blobExists(gitDir, commit, file)) return { commit, file };
  }
  throw new Error(`none of ${candidates.join(', ')} is whole at any commit from ${start}`);
}

const decodePointer = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/** Every `$ref` under a value. */
function refsIn(value: Json, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, into);
  else if (value && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) {
      if (key === '$ref' && typeof member === 'string') into.push(member);
      else refsIn(member, into);
    }
  }
  return into;
}

/** The components a value reaches, transitively, as section -> names. */
function reachableComponents(document: JsonObject, roots: Json[]): Map<string, Set<string>> {
  const components = document.components as Record<string, JsonObject>;
  const reached = new Map<string, Set<string>>();
  const pending = roots.flatMap((root) => refsIn(root));
  while (pending.length) {
    const ref = pending.pop()!;
    const match = /^#\/components\/([^/]+)\/([^/]+)(\/.*)?$/.exec(ref);
    if (!match) throw new Error(`a reference outside #/components: ${ref}`);
    const [section, name] = [decodePointer(match[1]!), decodePointer(match[2]!)];
    const target = components[section]?.[name];
    if (target === undefined) throw new Error(`a reference to nothing: ${ref}`);
    const names = reached.get(section) ?? reached.set(section, new Set()).get(section)!;
    if (names.has(name)) continue;
    names.add(name);
    pending.push(...refsIn(target));
  }
  return reached;
}

/** The names of the security schemes a value's `security` requirements name. */
function securityNames(requirements: Json | undefined): string[] {
  return Array.isArray(requirements) ? requirements.flatMap((requirement) => Object.keys(requirement as object)) : [];
}

export function cutDescription(document: JsonObject, cut: Cut, provenance: JsonObject): JsonObject {
  const sourcePaths = document.paths as Record<string, JsonObject>;
  const wanted = new Map<string, Set<string>>();
  for (const [method, template] of cut.operations) {
    if (!sourcePaths[template]?.[method])
      throw new Error(`no operation ${method.toUpperCase()} ${template} in the description`);
    (wanted.get(template) ?? wanted.set(template, new Set()).get(template)!).add(method);
  }
  // Paths and members in the description's own order, whatever the order of the list.
  const paths: Record<string, JsonObject> = {};
  for (const [template, item] of Object.entries(sourcePaths)) {
    const methods = wanted.get(template);
    if (methods)
      paths[template] = Object.fromEntries(
        Object.entries(item).filter(([key]) => !METHODS.has(key) || methods.has(key)),
      );
  }

  const sourceWebhooks = (document.webhooks ?? {}) as Record<string, JsonObject>;
  for (const name of cut.webhooks) if (!sourceWebhooks[name]) throw new Error(`no webhook ${name} in the description`);
  const webhooks = Object.fromEntries(Object.entries(sourceWebhooks).filter(([name]) => cut.webhooks.includes(name)));

  const operations = [...Object.values(paths), ...Object.values(webhooks)].flatMap((item) =>
    Object.entries(item)
      .filter(([key]) => METHODS.has(key))
      .map(([, operation]) => operation as JsonObject),
  );
  const reached = reachableComponents(document, [paths, webhooks]);
  const schemes = new Set([
    ...securityNames(document.security),
    ...operations.flatMap((operation) => securityNames(operation.security)),
  ]);
  if (schemes.size) reached.set('securitySchemes', new Set([...(reached.get('securitySchemes') ?? []), ...schemes]));
  const sourceComponents = document.components as Record<string, JsonObject>;
  const components: Record<string, JsonObject> = {};
  for (const [section, members] of Object.entries(sourceComponents)) {
    const names = reached.get(section);
    if (!names?.size) continue;
    components[section] = Object.fromEntries(Object.entries(members).filter(([name]) => names.has(name)));
  }

  const tagsUsed = new Set(operations.flatMap((operation) => (operation.tags as string[] | undefined) ?? []));
  const tags = Array.isArray(document.tags)
    ? document.tags.filter((tag) => tagsUsed.has((tag as JsonObject).name as string))
    : undefined;

  const cutDocument: JsonObject = {
    openapi: document.openapi!,
    info: { ...(document.info as JsonObject), 'x-vendored': provenance },
  };
  for (const key of ['jsonSchemaDialect', 'servers', 'security'] as const)
    if (document[key] !== undefined) cutDocument[key] = document[key];
  if (tags?.length) cutDocument.tags = tags;
  cutDocument.paths = paths;
  if (Object.keys(webhooks).length) cutDocument.webhooks = webhooks;
  cutDocument.components = components;
  return cutDocument;
}

function readme(
  carrier: string,
  cut: Cut,
  provenance: Record<string, string>,
  licence: string,
  outputBytes: number,
  skipped: string[],
) {
  const operations = cut.operations.map(([method, template]) => `- \`${method.toUpperCase()} ${template}\``);
  const webhooks = cut.webhooks.map((name) => `- \`${name}\``);
  return [
    `# ${carrier}: the published OpenAPI description, cut to what ${cut.usedBy ?? 'the voice adapters use'}`,
    '',
    'Generated by `scripts/cut-carrier-specs.ts`; do not edit by hand. See docs/features/carriers/conformance.md.',
    '',
    '| | |',
    '|-|-|',
    `| Repository | https://github.com/${provenance.repository} |`,
    `| File | \`${provenance.path}\` |`,
    `| Commit | \`${provenance.commit}\` (${provenance.commitDate}) |`,
    `| Source blob | git \`${provenance.blob}\`, sha256 \`${provenance.sha256}\`, ${provenance.sourceBytes} bytes |`,
    `| Subset | \`${cut.output}\`, ${outputBytes} bytes |`,
    `| Licence | ${licence} |`,
    '',
    ...(skipped.length
      ? [
          `${skipped.length} newer commit(s) change the file, the newest ${skipped[0]}, but the git directory this`,
          'was cut from is a partial copy without their version of it (it leaves out files of 4 MiB and more), so',
          'the newest commit where the file was whole is used. Re-cut from a full clone to move to the newest.',
          '',
        ]
      : []),
    '## Kept',
    '',
    'Operations:',
    '',
    ...operations,
    '',
    ...(webhooks.length ? ['Webhooks (the description\u2019s top-level `webhooks`):', '', ...webhooks, ''] : []),
    'With every component they reach through `$ref` (transitively, references intact), the security schemes',
    'the document and these operations name, the servers and the info block; `info.x-vendored` records the',
    'provenance above. Nothing of the kept parts is changed; the subset is written as JSON with two-space indents.',
    '',
    '## Re-cut',
    '',
    '```sh',
    `tsx scripts/cut-carrier-specs.ts ${carrier} <git-dir of ${provenance.repository}> [<commit>]`,
    '```',
    '',
  ].join('\n');
}

function main(argv: string[]) {
  const [carrier, gitDir, start = 'HEAD'] = argv;
  const cut = carrier ? CUTS[carrier] : undefined;
  if (!cut || !gitDir) {
    console.error(
      'usage: tsx scripts/cut-carrier-specs.ts <twilio|telnyx|openai|meta-whatsapp|calcom> <git-dir> [<commit>]',
    );
    process.exit(2);
  }
  const startCommit = git(gitDir, 'rev-parse', `${start}^{commit}`).toString().trim();
  const { commit, file } = findSource(gitDir, startCommit, cut.paths);
  const skipped = git(gitDir, 'log', '--format=%H %cI', `${commit}..${startCommit}`, '--', file)
    .toString()
    .split('\n')
    .filter(Boolean)
    .map((line) => line.replace(/^(\S+) (\S+)$/, '`$1` ($2)'));
  const source = git(gitDir, 'show', `${commit}:${file}`);
  const document = (
    file.endsWith('.json') ? JSON.parse(source.toString('utf8')) : parseYaml(source.toString('utf8'))
  ) as JsonObject;
  const provenance = {
    repository: cut.repository,
    path: file,
    commit,
    commitDate: git(gitDir, 'log', '-1', '--format=%cI', commit).toString().trim(),
    blob: git(gitDir, 'rev-parse', `${commit}:${file}`).toString().trim(),
    sha256: createHash('sha256').update(source).digest('hex'),
    sourceBytes: String(source.length),
    cutBy: 'scripts/cut-carrier-specs.ts',
  };
  const output = `${JSON.stringify(cutDescription(document, cut, provenance), null, 2)}\n`;
  const folder = path.join(projectRoot, 'vendor', 'openapi', carrier!);
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, cut.output), output);

  let licence: string;
  if (blobExists(gitDir, commit, cut.licenceFile)) {
    writeFileSync(path.join(folder, 'LICENSE'), git(gitDir, 'show', `${commit}:${cut.licenceFile}`));
    const info = document.info as JsonObject;
    const declared = (info.license as { name?: string } | undefined)?.name;
    licence =
      `the repository's \`${cut.licenceFile}\`, copied beside this file as \`LICENSE\`` +
      (declared ? `; the description's own \`info.license\` says ${declared}` : '');
  } else {
    const declared = ((document.info as JsonObject).license as { name?: string } | undefined)?.name;
    licence =
      `none published: the repository has no licence file at this commit` +
      (declared ? ` (the description's \`info.license\` says ${declared})` : ' and the description no `info.license`') +
      '. Vendored as the provider\u2019s published API description, unchanged in the parts kept, for conformance tests only.';
  }
  writeFileSync(
    path.join(folder, 'README.md'),
    readme(carrier!, cut, provenance, licence, Buffer.byteLength(output), skipped),
  );
  console.log(
    `${carrier}: ${file} at ${commit} -> vendor/openapi/${carrier}/${cut.output} (${Buffer.byteLength(output)} bytes)`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
