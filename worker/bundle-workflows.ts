// Builds the workflow bundles ahead of time, so a production worker starts without webpack.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { configureLogging, log } from '../lib/log';
import { workflowsPath } from './create-worker';
import { tracedBundlePath, tracingWorkflowInterceptorsModule } from './tracing-interceptors';
import { SHARED_WORKFLOW_MODULES } from './shared-workflow-modules';

/**
 * One workflow bundle at outputPath. `traced`: with the SDK's OpenTelemetry workflow interceptors, which
 * build a span for every workflow run and every activity it schedules inside the sandbox. Without them
 * the sandbox does no tracing work at all (docs/operations.md#traces).
 */
export async function buildWorkflowBundle(outputPath: string, { traced = false } = {}): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: traced ? [tracingWorkflowInterceptorsModule] : [],
    logger: quietLogger,
    preloadModules: [...SHARED_WORKFLOW_MODULES],
  });
  await mkdir(path.dirname(outputPath), { recursive: true });
  await writeFile(outputPath, code);
  return outputPath;
}

/**
 * Both bundles a worker may load: the untraced one at outputPath (WORKFLOW_BUNDLE_PATH) and the traced one
 * beside it (tracedBundlePath), which a worker loads instead when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
export async function buildWorkflowBundles(outputPath: string): Promise<{ untraced: string; traced: string }> {
  // One after the other: webpack is CPU-bound, two at once on the same cores gain nothing.
  const untraced = await buildWorkflowBundle(outputPath);
  const traced = await buildWorkflowBundle(tracedBundlePath(outputPath), { traced: true });
  return { untraced, traced };
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
  const written = await buildWorkflowBundles(output);
  log.info(written, 'workflow bundles written');
}
