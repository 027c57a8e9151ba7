// Builds the workflow bundle ahead of time, so a production worker starts without webpack.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { configureLogging, log } from '../lib/log';
import { workflowsPath } from './create-worker';
import { tracingWorkflowInterceptorsModule } from './tracing-interceptors';
import { SHARED_WORKFLOW_MODULES } from './shared-workflow-modules';

export async function buildWorkflowBundle(outputPath: string): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: [tracingWorkflowInterceptorsModule],
    logger: quietLogger,
    preloadModules: [...SHARED_WORKFLOW_MODULES],
  });
  await mkdir(path.dirname(outputPath), { recursive: true });
  await writeFile(outputPath, code);
  return outputPath;
}

const quietLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string) => log.warn(message),
  error: (message: string) => log.error(message),
};

if (import.meta.url === `file://${process.argv[1]}`) {
  configureLogging({ level: 'info', service: 'bundle-workflows' });
  const output = path.resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
  await buildWorkflowBundle(output);
  log.info({ output }, 'workflow bundle written');
}
