// The production build (`npm run build`): compiled into a folder laid out like the image (package.json,
// node_modules, dist/ and nothing else: no TypeScript sources beside it), the API, the worker with the compiled
// workflow bundle, the export worker and the CLI run with plain node against the test stack.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildAppLikeTheImage } from '../scripts/build';
import { freePort, waitFor } from '../scripts/stack/child-process';
import { projectRoot } from '../scripts/stack/paths';
import { useTestDatabase } from './support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from './support/ladders';
import { execTestProcess, startTestProcess } from './support/processes';
import { quietRuntime, uniqueTaskQueue } from './support/temporal';
import { createTestWorkspace } from './support/workspace';

const { db, url } = await useTestDatabase();
const appDir = mkdtempSync(path.join(os.tmpdir(), 'compiled-build-'));
const distDir = path.join(appDir, 'dist');
const taskQueue = uniqueTaskQueue('compiled');
afterAll(() => rmSync(appDir, { recursive: true, force: true }));

// `npm test` has type-checked the sources already.
beforeAll(() => {
  buildAppLikeTheImage(appDir, { typeCheck: false });
}, 300_000); // the build bundles the workflows too: minutes on a loaded machine

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: url,
    TEMPORAL_ADDRESS: inject('stack').temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    // info: the workers' start line (a JSON log line) is what says they poll.
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** `node dist/<entry>` in the image-like folder, its output collected; killed when the test finishes. */
function startCompiled(entry: string, extraEnv: Record<string, string> = {}) {
  return startTestProcess(entry, process.execPath, [path.join('dist', entry)], { cwd: appDir, env: env(extraEnv) });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' });
}

describe('the compiled build', () => {
  it('holds JavaScript only, with every relative import naming the file it loads', () => {
    const files = filesUnder(distDir);
    expect(files).toContain(path.join('api', 'main.js'));
    expect(files).toContain(path.join('generated', 'prisma', 'client.js'));
    expect(files.filter((file) => file.endsWith('.ts'))).toEqual([]);
    const extensionless = files
      .filter((file) => file.endsWith('.js') && !file.startsWith('workflow-bundle.'))
      .flatMap((file) => {
        const source = readFileSync(path.join(distDir, file), 'utf8');
        return [...source.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']*)["']/g)]
          .map((match) => match[1]!)
          .filter(
            (specifier) =>
              !specifier.endsWith('.js') || !existsSync(path.resolve(distDir, path.dirname(file), specifier)),
          )
          .map((specifier) => `${file}: ${specifier}`);
      });
    expect(extensionless).toEqual([]);
  });

  it('replays every committed history with the compiled workflow bundle', async () => {
    quietRuntime();
    const historiesDir = path.join(projectRoot, 'test/histories');
    const histories = readdirSync(historiesDir)
      .filter((file) => file.endsWith('.json'))
      .map((file) => ({
        workflowId: file,
        history: JSON.parse(readFileSync(path.join(historiesDir, file), 'utf8')) as object,
      }));
    expect(histories.length).toBeGreaterThan(0);
    let replayed = 0;
    for await (const result of Worker.runReplayHistories(
      { workflowBundle: { codePath: path.join(distDir, 'workflow-bundle.js') } },
      histories,
    )) {
      expect(result.error, result.workflowId).toBeUndefined();
      replayed += 1;
    }
    expect(replayed).toBe(histories.length);
  });

  it('runs the API, the worker, the export worker and the simulated carrier with plain node: a pushed lead is dialed to its end', async () => {
    const port = await freePort();
    const carrierPort = await freePort();
    const signingSecret = { SIMULATED_CARRIER_SIGNING_SECRET: 'compiled-build-test-signing-secret' };
    const api = startCompiled('api/main.js', { PORT: String(port), ...signingSecret });
    startCompiled('simulators/simulated-carrier/main.js', {
      SIMULATED_CARRIER_PORT: String(carrierPort),
      SIMULATED_CARRIER_TIME_SCALE: '0.001',
      ...signingSecret,
    });
    const worker = startCompiled('worker/main.js', {
      WORKFLOW_BUNDLE_PATH: path.join(distDir, 'workflow-bundle.js'),
      SIMULATED_CARRIER_URL: `http://127.0.0.1:${carrierPort}`,
      TELEPHONY_CALLBACK_BASE_URL: `http://127.0.0.1:${port}`,
    });
    const exportWorker = startCompiled('worker/export-worker.js', { EXPORT_DIR: path.join(appDir, 'exports') });
    const health = await waitFor(
      'compiled API',
      async () => {
        const response = await fetch(`http://127.0.0.1:${port}/health`);
        if (response.status !== 200) throw new Error(`/health answered ${response.status}`);
        return response.json();
      },
      30_000,
      api.exited,
    );
    expect(health).toEqual({ status: 'ok', database: 'up', temporal: 'up' });
    await waitFor(
      'compiled worker',
      async () => {
        if (!worker.output().includes(`"taskQueue":"${taskQueue}"`)) throw new Error(worker.output());
      },
      30_000,
      worker.exited,
    );
    await waitFor(
      'compiled export worker',
      async () => {
        if (!exportWorker.output().includes(`"taskQueue":"${taskQueue}-exports"`))
          throw new Error(exportWorker.output());
      },
      30_000,
      exportWorker.exited,
    );

    const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Compiled',
        acceptsLeadPush: true,
        status: 'RUNNING',
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: ALWAYS_OPEN,
      },
    });
    // A number ending in 5 is busy: one attempt on this ladder, then the lead fails.
    const pushed = await fetch(`http://127.0.0.1:${port}/v1/campaigns/${campaign.id}/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lead: { phone: '+14155550105' }, idempotencyKey: randomUUID() }),
    });
    expect(pushed.status).toBe(202);
    const lead = await waitFor(
      'the lead to finish',
      async () => {
        const row = await db.lead.findFirstOrThrow({ where: { campaignId: campaign.id }, include: { calls: true } });
        if (row.status !== 'failed') throw new Error(`lead is ${row.status}`);
        return row;
      },
      30_000,
      worker.exited,
    );
    expect(lead.calls.map((call) => call.outcome)).toEqual(['busy']);
  }, 120_000);

  it('runs the admin CLI with plain node', async () => {
    const { stdout } = await execTestProcess(
      process.execPath,
      ['dist/cli/admin.js', 'workspace', 'create', '--name', 'Compiled CLI', '--plan', 'ai'],
      { cwd: appDir, env: env() },
    );
    const { id } = JSON.parse(stdout) as { id: string };
    expect(await db.workspace.findUniqueOrThrow({ where: { id } })).toMatchObject({ name: 'Compiled CLI', plan: 'ai' });
  });
});
