import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Resource } from '@opentelemetry/resources';
import { NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createWorker } from '../worker/create-worker';
import { tracedBundlePath } from '../worker/tracing-interceptors';
import { startTestCarrier } from './support/carrier';
import { useTestDatabase } from './support/database';
import { createSimulatedWhatsApp } from '../lib/whatsapp/simulated-whatsapp';
import { quietRuntime, uniqueTaskQueue } from './support/temporal';
import { until } from './support/until';

// With tracing off the workflow sandbox must do no tracing work (issue 28): the worker loads a bundle without
// the SDK's OpenTelemetry workflow interceptors. With it on, the traced bundle beside it, as before.
quietRuntime();
const { db } = await useTestDatabase();
const carrier = await startTestCarrier(db);
const address = inject('stack').temporalAddress;
const clientConnection = await Connection.connect({ address });
const client = new Client({ connection: clientConnection });
const connection = await NativeConnection.connect({ address });
afterAll(async () => {
  await connection.close();
  await clientConnection.close();
});

/** The interceptors module's own code, as webpack names it in a bundle. */
const TRACING_MODULE = 'interceptors-opentelemetry/lib/workflow';
/** The header the SDK's workflow outbound interceptor adds to every activity it schedules (the span's context). */
const TRACE_HEADER = '_tracer-data';

/**
 * Runs a worker (traced or not) on the stack's bundle, starts a workflow whose first step schedules an
 * activity, and answers the headers that activity was scheduled with, as the history records them.
 */
async function headersOfFirstActivity(traced: boolean): Promise<string[]> {
  const taskQueue = uniqueTaskQueue('workflow-tracing');
  const worker = await createWorker({
    connection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: inject('stack').workflowBundlePath,
    dependencies: {
      db,
      calls: carrier.client,
      statusCallbackBaseUrl: 'http://127.0.0.1:9',
      whatsapp: createSimulatedWhatsApp(db),
      temporal: client,
    },
    ...(traced && { tracing: { spanProcessor: new NoopSpanProcessor(), resource: Resource.empty() } }),
  });
  const running = worker.run();
  // A live sheet's first sync, its activity scheduled on a queue no worker polls: the run waits on it.
  const handle = await client.workflow.start('liveSheetWorkflow', {
    taskQueue,
    workflowId: `workflow-tracing-${randomUUID()}`,
    args: [
      {
        sheetId: randomUUID(),
        spreadsheetId: 'none',
        intervalSeconds: 3600,
        activityTaskQueue: uniqueTaskQueue('nobody-polls'),
      },
    ],
  });
  try {
    const scheduled = await until(
      async () => (await handle.fetchHistory()).events ?? [],
      (events) => events.some((event) => event.activityTaskScheduledEventAttributes),
      30_000,
    );
    const attributes = scheduled.find(
      (event) => event.activityTaskScheduledEventAttributes,
    )!.activityTaskScheduledEventAttributes!;
    return Object.keys(attributes.header?.fields ?? {});
  } finally {
    await handle.terminate('test done');
    worker.shutdown();
    await running;
  }
}

describe('the workflow bundles', () => {
  it('leave the tracing workflow interceptors out of the untraced bundle and put them in the traced one', () => {
    const untraced = readFileSync(inject('stack').workflowBundlePath, 'utf8');
    const traced = readFileSync(tracedBundlePath(inject('stack').workflowBundlePath), 'utf8');
    expect(untraced).not.toContain(TRACING_MODULE);
    expect(traced).toContain(TRACING_MODULE);
  });

  it('run no tracing interceptor in the sandbox of a worker without tracing, and run it with tracing', async () => {
    expect(await headersOfFirstActivity(false)).not.toContain(TRACE_HEADER);
    expect(await headersOfFirstActivity(true)).toContain(TRACE_HEADER);
  });
});
