import { NativeConnection } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../../activities';
import type { TestCallResult } from '../../lib/test-calls/test-call';
import { holdTestCall, testCallHoldKey } from '../../lib/credits/test-call-billing';
import { prismaSql } from '../../lib/run-sql';
import { testCallWorkflowId } from '../../lib/temporal/workflow-ids';
import { grantCredits } from '../../lib/door/workspace-admin';
import { createSimulatedWhatsApp } from '../../lib/whatsapp/simulated-whatsapp';
import { createWorker } from '../../worker/create-worker';
import { insertAgent } from '../support/agents';
import { startTestApi } from '../support/api';
import { carrierDependencies, simulatedCarrierRecord, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import {
  quietRuntime,
  startTestWorker,
  uniqueTaskQueue,
  unreachableTemporal,
  useTemporalClient,
} from '../support/temporal';
import { insertTestCall } from '../support/calls';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db);
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });

const SCOPES = ['calls.test', 'billing.view'];

async function billedWorkspace(credits: number) {
  const workspace = await createTestWorkspace(db, { scopes: SCOPES });
  if (credits > 0) await grantCredits(db, workspace.workspaceId, credits);
  const agent = await insertAgent(db, workspace.workspaceId);
  return { ...workspace, agentId: agent.id };
}

async function place(workspace: TestWorkspace & { agentId: string }, to: string, via = api) {
  return via.request('POST', '/calls/test', { key: workspace.key, body: { agentId: workspace.agentId, to } });
}

async function placed(workspace: TestWorkspace & { agentId: string }, to: string) {
  const response = await place(workspace, to);
  expect(response.status).toBe(202);
  return ((await response.json()) as { callId: string }).callId;
}

const resultOf = (callId: string, client = temporal.client) =>
  client.workflow.getHandle(testCallWorkflowId(callId)).result() as Promise<TestCallResult>;

async function balanceOf(workspace: TestWorkspace) {
  const response = await api.request('GET', '/credits/balance', { key: workspace.key });
  expect(response.status).toBe(200);
  return response.json() as Promise<{ balance: string; pendingHolds: string }>;
}

/** Entries a hold's settlement writes together share their time: the order of kinds within a call. */
const KIND_ORDER = ['hold', 'hold_release', 'test_call'];

/** The call's ledger entries as the API lists them, oldest first (hold, release, charge): [kind, status, amount]. */
async function entriesOfCall(workspace: TestWorkspace, callId: string) {
  const response = await api.request('GET', '/credits/ledger?limit=200', { key: workspace.key });
  expect(response.status).toBe(200);
  const { items } = (await response.json()) as {
    items: Array<{ kind: string; status: string; amount: string; referenceId: string | null }>;
  };
  return items
    .filter((item) => item.referenceId === callId)
    .reverse()
    .sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind))
    .map((item) => [item.kind, item.status, item.amount]);
}

describe('test calls are billed', () => {
  it('holds credits when placed, then charges the started minutes of an answered call', async () => {
    const workspace = await billedWorkspace(1); // ten minutes
    const callId = await placed(workspace, '+14155550130'); // answered, talks 33 s
    expect(await resultOf(callId)).toMatchObject({ outcome: 'answered', durationMs: 33_000 });
    // The hold reserved all ten minutes the balance covered (up to the longest call), then: one started minute.
    expect(await entriesOfCall(workspace, callId)).toEqual([
      ['hold', 'posted', '-1.0000'],
      ['hold_release', 'posted', '1.0000'],
      ['test_call', 'posted', '-0.1000'],
    ]);
    expect(await balanceOf(workspace)).toEqual({ balance: '0.9000', pendingHolds: '0.0000' });
    const hold = await db.creditLedgerEntry.findFirstOrThrow({ where: { referenceId: callId, kind: 'hold' } });
    expect(hold).toMatchObject({ actor: 'api_key', actorId: workspace.keyId, idempotencyKey: testCallHoldKey(callId) });
  });

  it('voids the hold of a call that never connected (busy)', async () => {
    const workspace = await billedWorkspace(5);
    const callId = await placed(workspace, '+14155550125'); // busy
    expect(await resultOf(callId)).toMatchObject({ outcome: 'busy', durationMs: null });
    expect(await entriesOfCall(workspace, callId)).toEqual([
      ['hold', 'voided', '-3.0000'],
      ['hold_release', 'posted', '3.0000'],
    ]);
    expect(await balanceOf(workspace)).toEqual({ balance: '5.0000', pendingHolds: '0.0000' });
  });

  it('refuses a call with 402 insufficient_credits when the balance does not cover one minute: nothing placed', async () => {
    const workspace = await billedWorkspace(0.05);
    const dialedBefore = await simulatedCarrierRecord(db).count();
    const response = await place(workspace, '+14155550130');
    expect(response.status).toBe(402);
    expect(await response.json()).toEqual({ error: 'insufficient_credits', balance: '0.0500', required: '0.1000' });
    expect(await db.call.count({ where: { workspaceId: workspace.workspaceId } })).toBe(0);
    expect(await db.creditLedgerEntry.count({ where: { workspaceId: workspace.workspaceId } })).toBe(1); // the grant
    const broke = await billedWorkspace(0);
    const refused = await place(broke, '+14155550130');
    expect(refused.status).toBe(402);
    expect(await refused.json()).toEqual({ error: 'insufficient_credits', balance: '0.0000', required: '0.1000' });
    // Give the carrier a moment: nothing is dialed.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await simulatedCarrierRecord(db).count()).toBe(dialedBefore);
  });

  it('gives the hold back when the call cannot be started (Temporal unreachable: 503)', async () => {
    const down = await startTestApi({ db, url, temporal: await unreachableTemporal(temporal.taskQueue) });
    const workspace = await billedWorkspace(2);
    const response = await place(workspace, '+14155550130', down);
    expect(response.status).toBe(503);
    expect(await balanceOf(workspace)).toEqual({ balance: '2.0000', pendingHolds: '0.0000' });
    const holds = await db.creditLedgerEntry.findMany({ where: { workspaceId: workspace.workspaceId, kind: 'hold' } });
    expect(holds.map((entry) => entry.status)).toEqual(['voided']);
  });
});

/** A test call recorded as the API records it, with its hold, its workflow not started yet. */
async function recordedTestCall(workspace: TestWorkspace & { agentId: string }, to: string) {
  return db.$transaction(async (tx) => {
    const callId = await insertTestCall(tx, { workspaceId: workspace.workspaceId, agentId: workspace.agentId, to });
    await holdTestCall(
      prismaSql(tx),
      { workspaceId: workspace.workspaceId, callId, longestCallMs: 30 * 60_000 },
      { type: 'api_key', id: workspace.keyId },
    );
    return callId;
  });
}

describe('test call billing in the workflow', () => {
  it('voids the hold of a number put on the Do-Not-Call list after the call was taken', async () => {
    const workspace = await billedWorkspace(1);
    const callId = await recordedTestCall(workspace, '+14155550140');
    await db.doNotCall.create({ data: { workspaceId: workspace.workspaceId, phone: '+14155550140', source: 'api' } });
    await temporal.client.workflow.start('testCallWorkflow', {
      workflowId: testCallWorkflowId(callId),
      taskQueue: temporal.taskQueue,
      args: [{ callId }],
    });
    expect(await resultOf(callId)).toMatchObject({ outcome: 'do_not_call' });
    expect(await entriesOfCall(workspace, callId)).toEqual([
      ['hold', 'voided', '-1.0000'],
      ['hold_release', 'posted', '1.0000'],
    ]);
  });

  it('charges once when the billing activity fails after its write and Temporal retries it', async () => {
    quietRuntime();
    const taskQueue = uniqueTaskQueue('billing-retry');
    const address = inject('stack').temporalAddress;
    const clientConnection = await Connection.connect({ address });
    const connection = await NativeConnection.connect({ address });
    const dependencies = {
      db,
      ...carrierDependencies(carrier, api),
      whatsapp: createSimulatedWhatsApp(db),
      temporal: new Client({ connection: clientConnection }),
    };
    const activities = createActivities(dependencies);
    const attempts: string[] = [];
    const worker = await createWorker({
      connection,
      namespace: 'default',
      taskQueue,
      workflowBundlePath: inject('stack').workflowBundlePath,
      dependencies,
      options: {
        activities: {
          ...activities,
          // The charge is written, then the worker "dies" before Temporal hears of it: the attempt fails.
          async billTestCall(ended: TestCallResult) {
            await activities.billTestCall(ended);
            attempts.push(ended.callId);
            if (attempts.length === 1) throw new Error('lost after the write');
          },
        },
      },
    });
    const running = worker.run();
    afterAll(async () => {
      worker.shutdown();
      await running;
      await connection.close();
      await clientConnection.close();
    });
    const workspace = await billedWorkspace(1);
    const callId = await recordedTestCall(workspace, '+14155550130');
    await temporal.client.workflow.start('testCallWorkflow', {
      workflowId: testCallWorkflowId(callId),
      taskQueue,
      args: [{ callId }],
    });
    expect(await resultOf(callId)).toMatchObject({ outcome: 'answered' });
    expect(attempts).toEqual([callId, callId]);
    expect(await entriesOfCall(workspace, callId)).toEqual([
      ['hold', 'posted', '-1.0000'],
      ['hold_release', 'posted', '1.0000'],
      ['test_call', 'posted', '-0.1000'],
    ]);
    expect(await balanceOf(workspace)).toEqual({ balance: '0.9000', pendingHolds: '0.0000' });
  });
});
