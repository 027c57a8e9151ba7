import type { DataConverter } from '@temporalio/common';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDependencies } from '../activities';
import type { Tracing } from '../lib/tracing';
import { tracedBundlePath, tracingWorkerOptions, tracingWorkflowInterceptorsModule } from './tracing-interceptors';
import { SHARED_WORKFLOW_MODULES } from './shared-workflow-modules';
import { withWorkflowStackTraces } from './workflow-stack-traces';
import { DEFAULT_WORKFLOW_STACK_TRACES } from '../lib/config';

// workflows/index.ts beside the sources (tsx, vitest), dist/workflows/index.js beside the compiled worker.
// Only a path: nothing is read unless the worker bundles at start (no WORKFLOW_BUNDLE_PATH).
const ownFile = fileURLToPath(import.meta.url);
export const workflowsPath = path.resolve(path.dirname(ownFile), '../workflows', `index${path.extname(ownFile)}`);

export interface WorkerSetup {
  /** The payload codec under SECRETS_KEYS (lib/temporal/connection.ts temporalSetupOfConfig); unset: plain payloads. */
  dataConverter?: DataConverter;
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  dependencies: ActivityDependencies;
  /** Prebuilt bundle (production, tests); without it the worker bundles workflows/ at start. */
  workflowBundlePath?: string;
  options?: Partial<WorkerOptions>;
  /**
   * Where the workflows' and activities' spans go (lib/tracing.ts). Unset: no tracing at all, the worker
   * loads the bundle without the tracing workflow interceptors and registers no tracing interceptor or sink.
   */
  tracing?: Pick<Tracing, 'spanProcessor' | 'resource'>;
  /** The per-promise stack capture for the Web UI's Stack Trace tab (WORKFLOW_STACK_TRACES); default off. */
  workflowStackTraces?: 'on' | 'off';
}

export async function createWorker(setup: WorkerSetup): Promise<Worker> {
  const traced = setup.tracing ? tracingWorkerOptions(setup.tracing) : undefined;
  const stackTraces = (setup.workflowStackTraces ?? DEFAULT_WORKFLOW_STACK_TRACES) === 'on';
  return withWorkflowStackTraces(stackTraces, () =>
    Worker.create({
      connection: setup.connection,
      namespace: setup.namespace,
      taskQueue: setup.taskQueue,
      dataConverter: setup.dataConverter,
      activities: createActivities(setup.dependencies),
      // A prebuilt bundle has the shared modules in it already, and the tracing workflow interceptors when it
      // is the traced one (bundle-workflows.ts).
      ...(setup.workflowBundlePath
        ? { workflowBundle: { codePath: workflowBundleFor(setup.workflowBundlePath, traced !== undefined) } }
        : {
            workflowsPath,
            bundlerOptions: { preloadModules: [...SHARED_WORKFLOW_MODULES] },
          }),
      ...(traced && {
        interceptors: {
          ...traced.interceptors,
          ...(!setup.workflowBundlePath && { workflowModules: [tracingWorkflowInterceptorsModule] }),
        },
        sinks: traced.sinks,
      }),
      ...setup.options,
    }),
  );
}

/** The untraced bundle given, or the traced one beside it (tracedBundlePath); a missing traced bundle stops the start. */
function workflowBundleFor(untracedBundlePath: string, traced: boolean): string {
  if (!traced) return untracedBundlePath;
  const tracedPath = tracedBundlePath(untracedBundlePath);
  if (!existsSync(tracedPath))
    throw new Error(
      `tracing is on but the traced workflow bundle ${tracedPath} does not exist: build both with npm run build:workflows`,
    );
  return tracedPath;
}
