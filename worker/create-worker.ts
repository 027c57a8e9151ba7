import { createRequire } from 'node:module';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDependencies } from '../activities';

const require = createRequire(import.meta.url);
export const workflowsPath = require.resolve('../workflows/index.ts');

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
    ...(setup.workflowBundlePath ? { workflowBundle: { codePath: setup.workflowBundlePath } } : { workflowsPath }),
    ...setup.options,
  });
}
