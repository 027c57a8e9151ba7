// The bare ladder's side (bench/bare-ladder.ts) in its own process: a worker of the bare workflow bundle whose
// one local activity dials the simulated carrier over HTTP, and a tiny HTTP receiver of batches of leads (it starts
// their workflows) and of the carrier's signed status events (it signals the lead's workflow when its call ends). What the production path does with the
// API, the worker and PostgreSQL, with nothing else. Environment: TEMPORAL_ADDRESS, BARE_TASK_QUEUE,
// BARE_BUNDLE_PATH, SIMULATED_CARRIER_URL, SIMULATED_CARRIER_SIGNING_SECRET, BARE_PORT (its receiver's).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { verifyEventSignature, SIGNATURE_HEADER } from '../../lib/calls/signature';
import { withWorkflowStackTraces } from '../../worker/workflow-stack-traces';
import { DEFAULT_WORKFLOW_STACK_TRACES } from '../../lib/config';
import { bareCallEnded, type BareActivities } from './workflows';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const carrierUrl = env('SIMULATED_CARRIER_URL');
const signingSecret = env('SIMULATED_CARRIER_SIGNING_SECRET');
const taskQueue = env('BARE_TASK_QUEUE');
const TERMINAL = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);

const clientConnection = await Connection.connect({ address: env('TEMPORAL_ADDRESS') });
const client = new Client({ connection: clientConnection });

/** Workflow starts in flight at once for one batch of leads, as the API's outbox sends them. */
const START_CONCURRENCY = 20;

/** Starts a batch of bare leads (each its workflow, the attempt id its workflow id), START_CONCURRENCY at once. */
async function startLeads(leads: Array<{ attemptId: string; to: string }>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(START_CONCURRENCY, leads.length) }, async () => {
      while (next < leads.length) {
        const { attemptId, to } = leads[next++]!;
        await client.workflow.start('bareLeadWorkflow', {
          taskQueue,
          workflowId: attemptId,
          args: [{ attemptId, to }],
        });
      }
    }),
  );
}

const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    // The bare intake: a batch of leads over HTTP, as the API takes a push (its starts are this side's cost too).
    if (req.url === '/leads') {
      const { leads } = JSON.parse(body.toString('utf8')) as { leads: Array<{ attemptId: string; to: string }> };
      startLeads(leads).then(
        () => res.writeHead(200).end(),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
      return;
    }
    // Checked as the API checks it: a receiver that skipped it would be cheaper than any real one.
    if (!verifyEventSignature(signingSecret, body, req.headers[SIGNATURE_HEADER] as string | undefined)) {
      res.writeHead(401).end();
      return;
    }
    const event = JSON.parse(body.toString('utf8')) as { attemptId?: string; status: string };
    if (!event.attemptId || !TERMINAL.has(event.status)) {
      res.writeHead(200).end();
      return;
    }
    client.workflow
      .getHandle(event.attemptId)
      .signal(bareCallEnded, { status: event.status })
      .then(
        () => res.writeHead(200).end(),
        // The carrier delivers again until answered 2xx.
        () => res.writeHead(503).end(),
      );
  });
});
receiver.listen(Number(process.env.BARE_PORT ?? 0), '127.0.0.1');
await new Promise((resolve) => receiver.once('listening', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;

const activities: BareActivities = {
  async bareDial({ attemptId, to }: { attemptId: string; to: string }): Promise<string> {
    // The terminal event only: the bare lead waits for nothing else.
    const response = await fetch(`${carrierUrl}/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ attemptId, to, statusCallbackUrl: receiverUrl, statusCallbackEvents: [] }),
    });
    if (response.status !== 201) throw new Error(`the carrier answered ${response.status}`);
    return ((await response.json()) as { providerCallId: string }).providerCallId;
  },
};

const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
// The production worker's default for the SDK's stack capture, so that the two differ by their ladders only.
const worker = await withWorkflowStackTraces(DEFAULT_WORKFLOW_STACK_TRACES === 'on', () =>
  Worker.create({ connection, taskQueue, workflowBundle: { codePath: env('BARE_BUNDLE_PATH') }, activities }),
);
process.once('SIGTERM', () => worker.shutdown());
console.log(`bare side polling ${taskQueue}, receiving on ${receiverUrl}`);
await worker.run();
receiver.close();
await connection.close();
await clientConnection.close();
process.exit(0);
