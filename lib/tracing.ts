import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export interface Tracing {
  /** Whether spans leave the process (OTEL_EXPORTER_OTLP_ENDPOINT set). */
  exporting: boolean;
  resource: Resource;
  /** Where the worker's workflow spans go (they are made in the sandbox and handed over by a sink). */
  spanProcessor: SpanProcessor;
  /** Sends what is buffered, then stops: called on shutdown so the last spans are not lost. */
  shutdown(): Promise<void>;
}

/**
 * Installs the process's tracer provider (the global one @opentelemetry/api and the Temporal
 * interceptors use) when an OTLP endpoint is configured: spans are batched and posted as JSON to
 * <endpoint>/v1/traces. Without an endpoint nothing is installed: the API's tracer stays the no-op one
 * and spans cost nothing.
 */
export function startTracing(
  config: { OTEL_EXPORTER_OTLP_ENDPOINT?: string; OTEL_SERVICE_NAME?: string },
  service: string,
): Tracing {
  const resource = new Resource({ 'service.name': config.OTEL_SERVICE_NAME ?? service });
  if (!config.OTEL_EXPORTER_OTLP_ENDPOINT)
    return { exporting: false, resource, spanProcessor: new NoopSpanProcessor(), shutdown: async () => {} };
  const exporter = new OTLPTraceExporter({
    url: `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`,
  });
  const spanProcessor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  return { exporting: true, resource, spanProcessor, shutdown: () => provider.shutdown() };
}
