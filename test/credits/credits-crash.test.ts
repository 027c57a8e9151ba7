import { describe, expect, it } from 'vitest';
import type { TestCallResult } from '../../lib/test-calls/test-call';
import { testCallWorkflowId } from '../../lib/temporal/workflow-ids';
import { grantCredits } from '../../lib/door/workspace-admin';
import { insertAgent } from '../support/agents';
import { until } from '../support/until';
import { crashTestStack, killWorker } from '../support/worker-process';

// The worker dies while test calls talk, end and are billed. The carrier at a tenth of real time: a call talks 3 to 4 s,
// so the calls, placed a quarter of a second apart, all talk before the first ends, and end over about 4 s.
const { db, temporal, api, owner, startWorkerProcess } = await crashTestStack('credits-crash', ['calls.test'], {
  carrierTimeScale: 0.1,
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a worker killed with SIGKILL while test calls are billed', () => {
  it('charges every call exactly once: the next worker retries what the dead one was doing', async () => {
    await grantCredits(db, owner.workspaceId, 100);
    const agent = await insertAgent(db, owner.workspaceId);
    const first = startWorkerProcess();
    const callIds: string[] = [];
    for (let index = 0; index < 12; index++) {
      const response = await api.request('POST', '/calls/test', {
        key: owner.key,
        body: { agentId: agent.id, to: `+1415555${1000 + index * 10}` }, // last digit 0: answered
      });
      expect(response.status).toBe(202);
      callIds.push(((await response.json()) as { callId: string }).callId);
      // The others once the worker (a process that loads its bundle first) has dialed the first.
      if (index === 0)
        await until(
          () => db.call.count({ where: { id: callIds[0] } }),
          (count) => count === 1,
          60_000,
        );
      else await sleep(250);
    }
    // Killed as soon as the first charge is written, while the other calls still talk: a loaded machine that took
    // their ends in one burst could otherwise bill them all before the kill lands.
    while ((await db.creditLedgerEntry.count({ where: { workspaceId: owner.workspaceId, kind: 'test_call' } })) < 1)
      await sleep(5);
    await killWorker(first);
    const chargedAtCrash = await db.creditLedgerEntry.count({
      where: { workspaceId: owner.workspaceId, kind: 'test_call' },
    });
    // Some calls are still to be billed: by the next worker.
    console.log(`credits crash: the worker killed with ${chargedAtCrash} of 12 calls billed`);
    expect(chargedAtCrash).toBeLessThan(12);
    startWorkerProcess();

    const results = await Promise.all(
      callIds.map(
        (callId) => temporal.client.workflow.getHandle(testCallWorkflowId(callId)).result() as Promise<TestCallResult>,
      ),
    );
    expect(results.every((result) => result.outcome === 'answered')).toBe(true);
    const entries = await db.creditLedgerEntry.findMany({ where: { workspaceId: owner.workspaceId } });
    for (const callId of callIds) {
      const ofCall = entries.filter((entry) => entry.referenceId === callId);
      expect(ofCall.map((entry) => entry.kind).sort(), callId).toEqual(['hold', 'hold_release', 'test_call']);
      expect(ofCall.find((entry) => entry.kind === 'hold')!.status).toBe('posted');
    }
    const balance = (await db.workspace.findUniqueOrThrow({ where: { id: owner.workspaceId } })).creditBalance;
    const sum = entries.reduce((total, entry) => total + Number(entry.amount), 0);
    expect(Number(balance)).toBeCloseTo(100 - 12 * 0.1, 4);
    expect(sum).toBeCloseTo(Number(balance), 4);
  }, 120_000);
});
