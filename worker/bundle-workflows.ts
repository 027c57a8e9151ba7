// Builds the workflow bundle ahead of time, so a production worker starts without webpack.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsPath } from './create-worker';
import { SHARED_WORKFLOW_MODULES } from './shared-workflow-modules';

export async function buildWorkflowBundle(outputPath: string): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
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
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const output = path.resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
  await buildWorkflowBundle(output);
  console.log(`workflow bundle written to ${output}`);
}
