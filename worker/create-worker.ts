import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Resource } from '@opentelemetry/resources';
import { createActivities, type ActivityDependencies } from '../activities';
import type { Tracing } from '../lib/tracing';
import { tracingWorkerOptions, tracingWorkflowInterceptorsModule } from './tracing-interceptors';
import { SHARED_WORKFLOW_MODULES } from './shared-workflow-modules';

// workflows/index.ts beside the sources (tsx, vitest), dist/workflows/index.js beside the compiled worker.
// Only a path: nothing is read unless the worker bundles at start (no WORKFLOW_BUNDLE_PATH).
const ownFile = fileURLToPath(import.meta.url);
export const workflowsPath = path.resolve(path.dirname(ownFile), '../workflows', `index${path.extname(ownFile)}`);

export interface WorkerSetup {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  dependencies: ActivityDependencies;
  /** Prebuilt bundle (production, tests); without it the worker bundles workflows/ at start. */
  workflowBundlePath?: string;
  options?: Partial<WorkerOptions>;
  /** Where the workflows' and activities' spans go (lib/tracing.ts); unset: dropped. */
  tracing?: Pick<Tracing, 'spanProcessor' | 'resource'>;
}

const UNTRACED = { spanProcessor: new NoopSpanProcessor(), resource: Resource.empty() };

export async function createWorker(setup: WorkerSetup): Promise<Worker> {
  const traced = tracingWorkerOptions(setup.tracing ?? UNTRACED);
  return Worker.create({
    connection: setup.connection,
    namespace: setup.namespace,
    taskQueue: setup.taskQueue,
    activities: createActivities(setup.dependencies),
    // A prebuilt bundle has the tracing workflow interceptors and the shared modules in it already (bundle-workflows.ts).
    ...(setup.workflowBundlePath
      ? { workflowBundle: { codePath: setup.workflowBundlePath }, interceptors: traced.interceptors }
      : {
          workflowsPath,
          bundlerOptions: { preloadModules: [...SHARED_WORKFLOW_MODULES] },
          interceptors: { ...traced.interceptors, workflowModules: [tracingWorkflowInterceptorsModule] },
        }),
    sinks: traced.sinks,
    ...setup.options,
  });
}
