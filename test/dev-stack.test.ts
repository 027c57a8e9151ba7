import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, isPortFree } from '../scripts/stack/child-process';
import { atTestEnd, startTestProcess } from './support/processes';

const projectRoot = path.resolve(import.meta.dirname, '..');

/** Live processes of a process group. Zombies are left out: they have exited and hold nothing. */
function processesInGroup(groupId: number): string[] {
  const lines = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args=']).toString().trim().split('\n');
  return lines.filter((line) => {
    const [, pgid, stat] = line.trim().split(/\s+/);
    return Number(pgid) === groupId && !stat!.startsWith('Z');
  });
}

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
}

/** `npm start` minus the installs, on free ports with its data in a temporary folder. */
async function startDevStack() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dev-stack-test-'));
  chmodSync(dataDir, 0o711);
  atTestEnd(() => rmSync(dataDir, { recursive: true, force: true }));
  const ports = {
    PORT: await freePort(),
    EMBEDDED_POSTGRES_PORT: await freePort(),
    EMBEDDED_TEMPORAL_PORT: await freePort(),
    EMBEDDED_TEMPORAL_UI_PORT: await freePort(),
    SIMULATED_CARRIER_PORT: await freePort(),
    SIMULATED_WHATSAPP_PORT: await freePort(),
    TWILIO_TWIN_PORT: await freePort(),
    TELNYX_TWIN_PORT: await freePort(),
  };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WORKSPACE_DATA_DIR: dataDir,
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
  };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  // Its own process group, as in a terminal: Ctrl-C sends SIGINT to the whole group. Killed, group and all,
  // when the test finishes (test/support/processes.ts).
  const started = startTestProcess('dev-stack', process.execPath, ['--import', 'tsx', 'scripts/stack/dev-stack.ts'], {
    cwd: projectRoot,
    env,
  });
  const stack = started.child;
  const exited = started.exited.then(({ code }) => code);
  await eventually(() => started.output().includes('Stack is up') || !started.running, 90_000);
  return { stack, ports, dataDir, exited, output: started.output };
}

describe('npm start (scripts/stack/dev-stack.ts)', () => {
  it('brings up PostgreSQL, Temporal, migrations, the dev key, API, worker and export worker, and Ctrl-C leaves nothing running', async () => {
    const { stack, ports, dataDir, exited, output } = await startDevStack();
    try {
      expect(output()).toContain('Stack is up');
      const key = readFileSync(path.join(dataDir, 'dev-api-key'), 'utf8').trim();
      expect(output()).toContain(key);
      expect(output()).toContain(`http://127.0.0.1:${ports.EMBEDDED_TEMPORAL_UI_PORT}`);
      const health = await fetch(`http://127.0.0.1:${ports.PORT}/health`);
      expect(await health.json()).toEqual({ status: 'ok', database: 'up', temporal: 'up' });
      const campaign = await fetch(`http://127.0.0.1:${ports.PORT}/campaigns`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'smoke' }),
      });
      expect(campaign.status).toBe(201);
      // The export worker's JSON log line (lib/log.ts) behind the stack's [export-worker] prefix.
      const exportWorkerUp =
        /\[export-worker\] \{.*"taskQueue":"workspace-exports".*"msg":"export worker polling task queue"/;
      await eventually(() => exportWorkerUp.test(output()), 30_000);
      expect(output()).toMatch(exportWorkerUp);
      // The Telnyx twin answers in Telnyx's words (no key: 401 10009), and the workspace has its connection.
      const telnyx = await fetch(`http://127.0.0.1:${ports.TELNYX_TWIN_PORT}/v2/calls/v3:none`);
      expect(telnyx.status).toBe(401);
      expect(await telnyx.json()).toMatchObject({ errors: [{ code: '10009' }] });
      expect(output()).toMatch(
        /Telnyx twin +http:\/\/127\.0\.0\.1:\d+\/v2 .*connection [0-9a-f-]{36}, "Development Telnyx twin"/,
      );
      expect(processesInGroup(stack.pid!).length).toBeGreaterThanOrEqual(5);
    } finally {
      process.kill(-stack.pid!, 'SIGINT');
    }
    expect(await exited).toBe(0);
    expect(processesInGroup(stack.pid!)).toEqual([]);
    for (const port of Object.values(ports)) expect(await isPortFree(port)).toBe(true);
  }, 120_000);

  it('leaves nothing running even when the start command itself is killed outright', async () => {
    const { stack, ports, output } = await startDevStack();
    expect(output()).toContain('Stack is up');
    process.kill(stack.pid!, 'SIGKILL');
    await eventually(() => processesInGroup(stack.pid!).length === 0, 20_000);
    expect(processesInGroup(stack.pid!)).toEqual([]);
    for (const port of Object.values(ports)) expect(await isPortFree(port)).toBe(true);
  }, 120_000);
});
