import { createRequire } from 'node:module';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';
import type { Tracing } from '../lib/tracing';

/**
 * The SDK's workflow interceptors module (spans for the workflow's run and the activities it schedules,
 * carried to them in headers). Only the traced bundle has it (bundle-workflows.ts): with tracing off the
 * worker loads a bundle without it, so that no span is built in the sandbox only to be dropped.
 */
export const tracingWorkflowInterceptorsModule = createRequire(import.meta.url).resolve(
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
);

/**
 * A worker's OpenTelemetry wiring: each activity runs in a span, child of the span its workflow
 * scheduled it from, and its log lines carry the trace and span ids; the workflow's spans, made in the
 * sandbox, reach the process's span processor through the `exporter` sink.
 */
export function tracingWorkerOptions(tracing: Pick<Tracing, 'spanProcessor' | 'resource'>) {
  return {
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  } satisfies Partial<WorkerOptions>;
}

/**
 * The traced bundle's file, beside the untraced one the worker is given (WORKFLOW_BUNDLE_PATH): one variable
 * names both, so a deployment that turns tracing on changes nothing else. `workflow-bundle.js` ->
 * `workflow-bundle.traced.js`.
 */
export function tracedBundlePath(untracedBundlePath: string): string {
  return untracedBundlePath.replace(/(\.js)?$/, '.traced.js');
}
