import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { parseConfig } from '../lib/config';
import { createSimulatedWhatsApp } from '../lib/whatsapp/simulated-whatsapp';
import { createWorker } from '../worker/create-worker';
import { startTestCarrier } from './support/carrier';
import { useTestDatabase } from './support/database';
import { quietRuntime, uniqueTaskQueue } from './support/temporal';
import { until } from './support/until';

// WORKFLOW_STACK_TRACES (worker/workflow-stack-traces.ts): off, the SDK captures no stack per promise and the
// Web UI's Stack Trace tab (the __stack_trace query) is told so; on, it shows where the run waits.
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

/** Runs a worker with the setting given, starts a run that waits and asks it for its stack. */
async function stackTraceQuery(workflowStackTraces: 'on' | 'off'): Promise<string> {
  const taskQueue = uniqueTaskQueue('workflow-stack-traces');
  const worker = await createWorker({
    connection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: inject('stack').workflowBundlePath,
    workflowStackTraces,
    dependencies: {
      db,
      calls: carrier.client,
      statusCallbackBaseUrl: 'http://127.0.0.1:9',
      whatsapp: createSimulatedWhatsApp(db),
      temporal: client,
    },
  });
  const running = worker.run();
  // A live sheet with nothing asked of it waits for its next scheduled sync, an hour away, on a condition.
  const handle = await client.workflow.start('liveSheetWorkflow', {
    taskQueue,
    workflowId: `workflow-stack-traces-${randomUUID()}`,
    args: [
      { sheetId: randomUUID(), spreadsheetId: 'none', intervalSeconds: 3600, pending: { sync: false, rebuild: false } },
    ],
  });
  try {
    await until(
      async () => (await handle.fetchHistory()).events ?? [],
      (events) => events.some((event) => event.workflowTaskCompletedEventAttributes),
      30_000,
    );
    return await handle.query<string>('__stack_trace').catch((error: Error) => `query failed: ${error.message}`);
  } finally {
    await handle.terminate('test done');
    worker.shutdown();
    await running;
  }
}

describe('WORKFLOW_STACK_TRACES', () => {
  it('is off unless set, and takes on and off only', () => {
    const url = 'postgresql://user@127.0.0.1/db';
    expect(parseConfig({ DATABASE_URL: url }).WORKFLOW_STACK_TRACES).toBe('off');
    expect(parseConfig({ DATABASE_URL: url, WORKFLOW_STACK_TRACES: 'on' }).WORKFLOW_STACK_TRACES).toBe('on');
    expect(() => parseConfig({ DATABASE_URL: url, WORKFLOW_STACK_TRACES: 'yes' })).toThrow(/WORKFLOW_STACK_TRACES/);
  });

  it('off: the workflow thread captures no stack, and the stack trace query says so', async () => {
    expect(await stackTraceQuery('off')).toMatch(/query failed: .*stack traces are not enabled/i);
  });

  it('on: the stack trace query shows the workflow code the run waits in', async () => {
    const stack = await stackTraceQuery('on');
    expect(stack).not.toMatch(/query failed/);
    expect(stack).toContain('workflows/sheets/live-sheet.ts');
  });
});
