import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './child-process';
import { migrateDeploy } from './migrate';
import { ensureDatabase, startEmbeddedPostgres } from './postgres';
import { startEmbeddedTemporal } from './temporal';
import { buildWorkflowBundle } from '../../worker/bundle-workflows';

export const TEMPLATE_DATABASE = 'app_template';

/** What the test suites share: one PostgreSQL cluster, one Temporal dev server, one workflow bundle. */
export interface TestStack {
  postgresAdminUrl: string;
  templateDatabase: string;
  temporalAddress: string;
  workflowBundlePath: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through \`npm test\``);
  return value;
}

/** Real servers on free loopback ports, data in a temporary folder. */
export async function startTestStack(): Promise<{ stack: TestStack; stop: () => Promise<void> }> {
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'workspace-test-'));
  // PostgreSQL runs as its own system user when the tests run as root: it must reach its data folder.
  chmodSync(workDir, 0o711);
  const [postgresStart, temporalStart] = await Promise.allSettled([
    startEmbeddedPostgres({
      binDir: required('PG_BIN_DIR'),
      dataDir: path.join(workDir, 'postgres'),
      port: await freePort(),
      durable: false,
      quiet: true,
    }),
    startEmbeddedTemporal({
      cliPath: required('TEMPORAL_CLI_PATH'),
      port: await freePort(),
      uiPort: null,
      dbFile: null,
      quiet: true,
    }),
  ]);
  if (postgresStart.status === 'rejected' || temporalStart.status === 'rejected') {
    if (postgresStart.status === 'fulfilled') await postgresStart.value.stop();
    if (temporalStart.status === 'fulfilled') await temporalStart.value.stop();
    rmSync(workDir, { recursive: true, force: true });
    throw postgresStart.status === 'rejected' ? postgresStart.reason : (temporalStart as PromiseRejectedResult).reason;
  }
  const [postgres, temporal] = [postgresStart.value, temporalStart.value];
  await ensureDatabase(postgres.urlFor('postgres'), TEMPLATE_DATABASE);
  await migrateDeploy(postgres.urlFor(TEMPLATE_DATABASE));
  const workflowBundlePath = await buildWorkflowBundle(path.join(workDir, 'workflow-bundle.js'));
  return {
    stack: {
      postgresAdminUrl: postgres.urlFor('postgres'),
      templateDatabase: TEMPLATE_DATABASE,
      temporalAddress: temporal.address,
      workflowBundlePath,
    },
    stop: async () => {
      await Promise.allSettled([temporal.stop(), postgres.stop()]);
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}
