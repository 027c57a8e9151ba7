// `npm run fuzz`: Schemathesis, every check, over every operation of /v1/openapi.json, against the real
// stack (PostgreSQL, Temporal dev server, API and worker) on free ports, for FUZZ_SECONDS. Exits non-zero
// on any failure test/fuzz/baseline.yaml does not accept, or on a baseline entry without a one-line reason.
// Arguments are passed on to `st run` (for example --seed N, or --max-examples N).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase } from '../../lib/database';
import { runStatement } from '../../lib/pg-statement';
import { HOLDABLE_SCOPES } from '../../lib/door/permissions';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { addMember, createApiKey, createWorkspace, FEATURES } from '../../lib/door/workspace-admin';
import { freePort, startProcess, waitFor, type ManagedProcess } from '../stack/child-process';
import { startTestStack } from '../stack/ephemeral-stack';
import { projectRoot } from '../stack/paths';
import { readBaseline, readFailures, summarize, type RunReport } from './report';

const SCHEMATHESIS = process.env.SCHEMATHESIS_BIN ?? path.join(projectRoot, '.tools/schemathesis-venv/bin/st');
const BASELINE_PATH = path.join(projectRoot, 'test/fuzz/baseline.yaml');
const OUTPUT_DIR = path.join(projectRoot, '.test-results/fuzz');
const REPORT_FILES = [
  'schemathesis.json',
  'events.ndjson',
  'junit.xml',
  'schemathesis.log',
  'summary.json',
  'summary.md',
  'api.log',
  'worker.log',
];
const seconds = Number(process.env.FUZZ_SECONDS ?? 120);
if (!Number.isInteger(seconds) || seconds < 1) throw new Error('FUZZ_SECONDS must be a whole number of seconds');

const stops: Array<() => Promise<unknown>> = [];
async function stopAll() {
  for (const stop of stops.reverse()) await stop().catch((error: unknown) => console.error(String(error)));
}

/** A workspace that can reach every endpoint: plan ai, every feature, every holdable scope, a limit the fuzzer never meets. */
async function fuzzWorkspace(databaseUrl: string): Promise<string> {
  const db = createDatabase(databaseUrl, { poolSize: 1 });
  try {
    const { id: workspaceId } = await createWorkspace(db, 'Fuzzing workspace', {
      plan: 'ai',
      features: [...FEATURES],
      rateLimitPerMinute: 1_000_000,
    });
    // A number of its own, so that GET /phone-numbers answers a non-empty list the fuzzer checks.
    await assignPhoneNumber(db, workspaceId, '+14155550100', ['voice', 'whatsapp']);
    const { id: memberId } = await addMember(db, workspaceId, 'owner@fuzz.localhost', 'owner');
    return (await createApiKey(db, memberId, { scopes: [...HOLDABLE_SCOPES] })).key;
  } finally {
    await db.$disconnect();
  }
}

function start(name: string, entry: string, env: NodeJS.ProcessEnv, logDir: string): ManagedProcess {
  const child = startProcess(name, process.execPath, ['--import', 'tsx', entry], {
    cwd: projectRoot,
    env,
    quiet: true,
  });
  const log = path.join(logDir, `${name}.log`);
  const lines: string[] = [];
  for (const stream of [child.child.stdout, child.child.stderr])
    stream?.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
  stops.push(async () => {
    await child.stop();
    writeFileSync(log, lines.join(''));
  });
  return child;
}

/** "GET /v1/results" -> its OpenAPI tags, for baseline entries that cover a tag. */
async function operationTags(baseUrl: string): Promise<Map<string, string[]>> {
  const document = (await (await fetch(`${baseUrl}/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { tags?: string[] }>>;
  };
  return new Map(
    Object.entries(document.paths).flatMap(([pathTemplate, operations]) =>
      Object.entries(operations).map(
        ([method, operation]) => [`${method.toUpperCase()} ${pathTemplate}`, operation.tags ?? []] as const,
      ),
    ),
  );
}

/**
 * Run in the output folder: Schemathesis keeps its cache of failing cases (`st replay <id>`) in .schemathesis/
 * there. Its own report (every failure with a curl line to reproduce it) goes to schemathesis.log.
 */
function runSchemathesis(args: string[], logPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const log = openSync(logPath, 'w');
    const child = spawn(SCHEMATHESIS, args, {
      cwd: OUTPUT_DIR,
      stdio: ['ignore', log, log],
      env: { ...process.env, NO_COLOR: '1', COLUMNS: '120' },
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

async function main(): Promise<number> {
  const baseline = readBaseline(BASELINE_PATH);
  mkdirSync(OUTPUT_DIR, { recursive: true });
  for (const file of REPORT_FILES) rmSync(path.join(OUTPUT_DIR, file), { force: true });
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'workspace-fuzz-'));
  stops.push(async () => rmSync(workDir, { recursive: true, force: true }));

  console.error('[fuzz] starting PostgreSQL and the Temporal dev server');
  const { stack, stop } = await startTestStack();
  stops.push(stop);
  await runStatement(stack.postgresAdminUrl, `CREATE DATABASE fuzz TEMPLATE "${stack.templateDatabase}"`);
  const databaseUrl = stack.postgresAdminUrl.replace(/\/postgres$/, '/fuzz');
  const key = await fuzzWorkspace(databaseUrl);

  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_TASK_QUEUE: 'fuzz',
    WORKFLOW_BUNDLE_PATH: stack.workflowBundlePath,
    EXPORT_DIR: path.join(workDir, 'exports'),
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  };
  start('worker', 'worker/main.ts', env, OUTPUT_DIR);
  const api = start('api', 'api/main.ts', env, OUTPUT_DIR);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    'API',
    async () => {
      const response = await fetch(`${baseUrl}/health`);
      if (response.status !== 200) throw new Error(`health answered ${response.status}`);
    },
    60_000,
    api.exited,
  );

  const [reportPath, eventsPath, junitPath, logPath] = REPORT_FILES.slice(0, 4).map((file) =>
    path.join(OUTPUT_DIR, file),
  ) as [string, string, string, string];
  const tags = await operationTags(baseUrl);
  console.error(`[fuzz] Schemathesis, every check, every operation, ${seconds} s (FUZZ_SECONDS)`);
  const exitCode = await runSchemathesis(
    [
      'run',
      `${baseUrl}/v1/openapi.json`,
      '--checks',
      'all',
      '--header',
      `Authorization: Bearer ${key}`,
      '--max-time',
      String(seconds),
      '--report',
      'json,ndjson,junit',
      '--report-json-path',
      reportPath,
      '--report-ndjson-path',
      eventsPath,
      '--report-junit-path',
      junitPath,
      '--output-truncate',
      'true',
      // One worker: Hypothesis parses lambdas with ast, which CPython before 3.13 does not do safely from two threads
      // ("AST constructor recursion depth mismatch", CPython issue 106905).
      '--workers',
      '1',
      // Hypothesis's health checks judge how data is drawn (too much filtered, too slow on a busy machine), not the API.
      '--suppress-health-check',
      'all',
      ...process.argv.slice(2),
    ],
    logPath,
  );
  if (!existsSync(reportPath))
    throw new Error(
      `Schemathesis exited with ${exitCode} and wrote no report; see ${path.relative(projectRoot, logPath)}`,
    );
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as RunReport;
  const summary = summarize(
    report,
    await readFailures(eventsPath),
    baseline,
    (operation) => tags.get(operation) ?? [],
    seconds,
  );
  writeFileSync(path.join(OUTPUT_DIR, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  writeFileSync(path.join(OUTPUT_DIR, 'summary.md'), `${summary.lines.join('\n')}\n`);
  for (const line of summary.lines) console.log(line);
  if (!summary.ok)
    console.log(`Schemathesis's own report, with a curl line for each failure: ${path.relative(projectRoot, logPath)}`);
  return summary.ok ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  console.error(`[fuzz] ${error instanceof Error ? error.stack : String(error)}`);
} finally {
  await stopAll();
}
process.exit(code);
