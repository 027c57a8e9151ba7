import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDependencies } from '../activities';
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
}

export async function createWorker(setup: WorkerSetup): Promise<Worker> {
  return Worker.create({
    connection: setup.connection,
    namespace: setup.namespace,
    taskQueue: setup.taskQueue,
    activities: createActivities(setup.dependencies),
    ...(setup.workflowBundlePath
      ? { workflowBundle: { codePath: setup.workflowBundlePath } }
      : { workflowsPath, bundlerOptions: { preloadModules: [...SHARED_WORKFLOW_MODULES] } }),
    ...setup.options,
  });
}
