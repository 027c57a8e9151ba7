import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './child-process';
import { migrateDeploy } from './migrate';
import { ensureDatabase, startEmbeddedPostgres } from './postgres';
import { type EmbeddedTemporal } from './temporal';
import { freeClusterPorts, startTemporalCluster } from './temporal-cluster';
import { requiredPath, startDevServer, testTemporalChoice, type TestTemporalKind } from './test-temporal';
import { buildWorkflowBundles } from '../../worker/bundle-workflows';

export const TEMPLATE_DATABASE = 'app_template';

/** What the test suites share: one PostgreSQL cluster, one Temporal server, one workflow bundle. */
export interface TestStack {
  postgresAdminUrl: string;
  templateDatabase: string;
  temporalAddress: string;
  /** Which Temporal temporalAddress is (TEST_TEMPORAL): tests that start a server of their own start the same kind. */
  temporal: TestTemporalKind;
  workflowBundlePath: string;
}

/**
 * TEST_TEMPORAL=cluster: the production-shaped cluster (the real server on a PostgreSQL cluster of its own, in
 * workDir), with TEST_TEMPORAL_SHARDS history shards; otherwise the CLI's dev server in memory.
 */
async function startTestTemporal(workDir: string): Promise<{ server: EmbeddedTemporal; kind: TestTemporalKind }> {
  const choice = testTemporalChoice();
  if (choice.kind === 'dev') {
    const server = await startDevServer();
    return { server, kind: choice };
  }
  const postgres = await startEmbeddedPostgres({
    binDir: requiredPath('PG_BIN_DIR'),
    dataDir: path.join(workDir, 'temporal-postgres'),
    port: await freePort(),
    durable: false,
    quiet: true,
  });
  try {
    const cluster = await startTemporalCluster({
      serverPath: requiredPath('TEMPORAL_SERVER_PATH'),
      sqlToolPath: requiredPath('TEMPORAL_SQL_TOOL_PATH'),
      postgresAdminUrl: postgres.urlFor('postgres'),
      rootDir: path.join(workDir, 'temporal'),
      historyShards: choice.historyShards,
      ports: await freeClusterPorts(),
    });
    const server = {
      ...cluster,
      stop: async () => {
        await cluster.stop();
        await postgres.stop();
      },
    };
    return { server, kind: { ...choice, postgresAdminUrl: postgres.urlFor('postgres') } };
  } catch (error) {
    await postgres.stop();
    throw error;
  }
}

/** Real servers on free loopback ports, data in a temporary folder. */
export async function startTestStack(): Promise<{ stack: TestStack; stop: () => Promise<void> }> {
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'workspace-test-'));
  // PostgreSQL runs as its own system user when the tests run as root: it must reach its data folder.
  chmodSync(workDir, 0o711);
  const [postgresStart, temporalStart] = await Promise.allSettled([
    startEmbeddedPostgres({
      binDir: requiredPath('PG_BIN_DIR'),
      dataDir: path.join(workDir, 'postgres'),
      port: await freePort(),
      durable: false,
      quiet: true,
    }),
    startTestTemporal(workDir),
  ]);
  if (postgresStart.status === 'rejected' || temporalStart.status === 'rejected') {
    if (postgresStart.status === 'fulfilled') await postgresStart.value.stop();
    if (temporalStart.status === 'fulfilled') await temporalStart.value.server.stop();
    rmSync(workDir, { recursive: true, force: true });
    throw postgresStart.status === 'rejected' ? postgresStart.reason : (temporalStart as PromiseRejectedResult).reason;
  }
  const [postgres, { server: temporal, kind }] = [postgresStart.value, temporalStart.value];
  await ensureDatabase(postgres.urlFor('postgres'), TEMPLATE_DATABASE);
  await migrateDeploy(postgres.urlFor(TEMPLATE_DATABASE));
  // Both bundles: the tests' traced processes (test/telemetry.test.ts) load the traced one beside it.
  const { untraced: workflowBundlePath } = await buildWorkflowBundles(path.join(workDir, 'workflow-bundle.js'));
  return {
    stack: {
      postgresAdminUrl: postgres.urlFor('postgres'),
      templateDatabase: TEMPLATE_DATABASE,
      temporalAddress: temporal.address,
      temporal: kind,
      workflowBundlePath,
    },
    stop: async () => {
      await Promise.allSettled([temporal.stop(), postgres.stop()]);
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}
