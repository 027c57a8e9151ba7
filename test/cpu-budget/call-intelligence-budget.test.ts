import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { createCpuBudget } from '../../lib/cpu-budget/cpu-budget';
import { ErrorCode } from '../../lib/error-codes';
import { startCallIntelligence } from '../../lib/temporal/start-call-intelligence';
import { VOICES } from '../../lib/voices/voices';
import { insertAgent } from '../support/agents';
import { SALES_FIELDS, SALES_SCRIPT, salesConversation } from '../support/call-intelligence';
import { startTestApi } from '../support/api';
import { insertAnsweredCall } from '../support/calls';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';

// A worker whose CPU budget threads spin on every step (test/cpu-budget/stuck-thread.ts): what a tenant's text that
// overruns the rules does, whatever the matchers become.
const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db);
const cpuBudget = createCpuBudget({
  threads: 1,
  budgetMs: 200,
  threadFile: new URL('./stuck-thread.ts', import.meta.url),
});
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api), cpuBudget });
const owner = await createTestWorkspace(db, { scopes: ['calls.view', 'calls.edit'] });

describe('call intelligence over its CPU budget', () => {
  it('fails the job once with cpu_budget_exceeded, never retried, and the call keeps no intelligence', async () => {
    const agent = await insertAgent(db, owner.workspaceId, {
      name: 'Ana',
      voiceId: VOICES[0]!.id,
      script: SALES_SCRIPT,
      extractionFields: SALES_FIELDS,
    });
    const call = await insertAnsweredCall(db, owner, {
      agentId: agent.id,
      answeredBy: 'human',
      carrierStatus: 'completed',
      transcript: salesConversation(),
    });
    const { workflowId } = await startCallIntelligence(temporal.client, temporal.taskQueue, call.id);
    const handle = temporal.client.workflow.getHandle(workflowId);
    const failure = await handle.result().then(
      () => expect.fail('the job over its budget completed'),
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const activityFailure = (failure as WorkflowFailedError).cause;
    expect(activityFailure).toBeInstanceOf(ActivityFailure);
    expect((activityFailure as ActivityFailure).activityType).toBe('extractCallFields');
    const cause = (activityFailure as ActivityFailure).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause).toMatchObject({ type: ErrorCode.cpu_budget_exceeded, nonRetryable: true });

    // One attempt, not a poison task moving from worker to worker.
    const history = await handle.fetchHistory();
    const attempts = (history.events ?? [])
      .map((event) => event.activityTaskStartedEventAttributes?.attempt)
      .filter((attempt) => attempt !== undefined && attempt !== null);
    expect(attempts).toEqual([1, 1]); // ensureCallTranscript (stored: no step), then extractCallFields once
    // GET /calls/{id} answers intelligence null, as for a call not computed (docs/cpu-budget.md).
    expect((await db.call.findUniqueOrThrow({ where: { id: call.id } })).intelligence).toBeNull();
    const detail = await api.request('GET', `/calls/${call.id}`, { key: owner.key });
    expect(detail.status).toBe(200);
    expect(await detail.json()).toMatchObject({ intelligence: null, evaluationScore: null, extractedFields: null });
  });
});
