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
 * carried to them in headers). It goes into every workflow bundle (bundle-workflows.ts), traced or not;
 * untraced workers give it a sink that drops its spans.
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
