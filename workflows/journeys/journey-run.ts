import {
  ApplicationFailure,
  CancellationScope,
  condition,
  executeChild,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { JourneyTrigger } from '../../activities/journeys/journeys';
import { ErrorCode } from '../../lib/error-codes';
import { awaitedDecision, recordOf, type AwaitedDecision } from '../../lib/journeys/awaiting';
import { chooseBranch } from '../../lib/journeys/conditions';
import type { JourneyDefinition, JourneyNode } from '../../lib/journeys/definition';
import { safeParseNodeData, type BranchData } from '../../lib/journeys/node-data';
import { isFinalRunStatus, type JourneyRunStatus } from '../../lib/journeys/run-statuses';
import type {
  JourneyRunInput,
  JourneyRunResult,
  JourneyRunState,
  RecoveryDecision,
} from '../../lib/journeys/run-state';
import { renderTemplate } from '../../lib/journeys/render';
import { isJsonBody, renderJsonTemplate } from '../../lib/journeys/render-json';
import { leadDialWorkflow } from '../dial-ladder/legacy/lead-dial';
import { leadLadderWorkflow } from '../dial-ladder/legacy/lead-ladder';
import { leadLadderWorkflowV2 } from '../dial-ladder/lead-ladder';
import type { LeadOutcome } from '../../lib/dial-ladder/lead-state';
import { journeyRunStateQuery, recoverSignal, recoverUpdate } from '../../lib/temporal/messages';
import { journeyNodeThenOperator, journeyRunBookkeeping } from '../../lib/temporal/retry-policies';
import { PATCHES } from '../../lib/temporal/patches';

// Bookkeeping against PostgreSQL: retried until it works, a database outage only delays the run.
const { loadJourneyRun, recordJourneyRun, recordJourneyDecision, untilLocalTime, finishLead, enqueueLeadFinished } =
  proxyActivities<Activities>({
    startToCloseTimeout: '30 seconds',
    retry: journeyRunBookkeeping,
  });
// A node's side effect: a few retries, then the run asks an operator (needs_recovery) instead of failing.
const { callJourneyWebhook, sendWhatsAppTemplate, sendJourneyWhatsApp } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: journeyNodeThenOperator,
});

/** Search attribute an operator filters on in the Temporal UI: JourneyStatus = "needs_recovery". */
const STATUS_ATTRIBUTE = 'JourneyStatus';

class RunEnded extends Error {
  constructor(
    readonly status: JourneyRunResult['status'],
    readonly endNodeId: string | null,
  ) {
    super(`run ended: ${status}`);
  }
}

/**
 * A lead's walk through a journey revision: each node's side effect is an activity (or the dial
 * ladder as a child workflow), waits are durable timers, branches are decided here from the run's
 * variables. A node that fails for good does not fail the run: the run waits, marked
 * needs_recovery, for an operator to retry the node, skip it with a given output, or end the run.
 */
export async function journeyRunWorkflow({ runId }: JourneyRunInput): Promise<JourneyRunResult> {
  const state: JourneyRunState = {
    status: 'running',
    currentNodeId: null,
    variables: {},
    attempt: 0,
    nextWakeAt: null,
    awaiting: null,
    decisions: [],
    endedAt: null,
  };
  let pendingDecision: RecoveryDecision | null = null;
  setHandler(journeyRunStateQuery, () => state);
  const takeDecision = (decision: RecoveryDecision) => {
    pendingDecision = decision;
    return state;
  };
  setHandler(
    recoverUpdate,
    async (decision) => {
      takeDecision(decision);
      // Answered once the decision is recorded and acted on: the run is running again, or has ended.
      await condition(() => pendingDecision === null && state.status !== 'needs_recovery');
      return state;
    },
    {
      // Typed as what may arrive: an Update's payload is whatever the caller sent.
      validator: (decision: Partial<RecoveryDecision> | undefined) => {
        if (!state.awaiting)
          throw ApplicationFailure.create({
            type: ErrorCode.run_not_awaiting_decision,
            message: 'the run is not waiting for a decision',
          });
        if (!decision?.action || !state.awaiting.allowedActions.includes(decision.action)) {
          throw ApplicationFailure.create({
            type: ErrorCode.invalid_body,
            message: `action must be one of ${state.awaiting.allowedActions.join(', ')}`,
            details: ['action'],
          });
        }
        // Refused before it is accepted: nothing is recorded, and the caller learns who must be named.
        // The signal cannot be refused, so it keeps its fallback ("unknown operator").
        if (typeof decision.decidedBy !== 'string' || !decision.decidedBy.trim()) {
          throw ApplicationFailure.create({
            type: ErrorCode.invalid_body,
            message: 'decidedBy is required: who takes this decision',
            details: ['decidedBy'],
          });
        }
      },
    },
  );
  setHandler(recoverSignal, (decision) => {
    // A signal cannot be refused: one that does not fit the moment is dropped (the UI shows it in the history).
    if (state.awaiting && state.awaiting.allowedActions.includes(decision?.action)) takeDecision(decision);
  });

  const setStatus = async (status: JourneyRunStatus, recovery: AwaitedDecision | null = null) => {
    state.status = status;
    upsertSearchAttributes({ [STATUS_ATTRIBUTE]: [status] });
    await recordJourneyRun({
      runId,
      status,
      currentNodeId: state.currentNodeId,
      recovery: recovery && recordOf(recovery),
      ...(isFinalRunStatus(status) && { variables: state.variables }),
    });
  };

  /** Waits for an operator; returns the decision once recorded. */
  const awaitDecision = async (awaiting: AwaitedDecision): Promise<RecoveryDecision> => {
    state.awaiting = awaiting;
    await setStatus('needs_recovery', awaiting);
    await condition(() => pendingDecision !== null);
    const decision = pendingDecision!;
    const decidedBy = decision.decidedBy?.trim() || 'unknown operator';
    const via = decision.via ?? 'temporal';
    await recordJourneyDecision({
      runId,
      nodeId: awaiting.nodeId,
      action: decision.action,
      output: decision.output,
      note: decision.note,
      decidedBy,
      via,
    });
    state.decisions.push({
      nodeId: awaiting.nodeId,
      action: decision.action,
      decidedBy,
      via,
      note: decision.note ?? null,
      at: new Date().toISOString(),
    });
    state.awaiting = null;
    pendingDecision = null;
    if (decision.action !== 'end') await setStatus('running');
    return decision;
  };

  const run = await loadJourneyRun({ runId });
  const { definition, trigger, leadId, workspaceId } = run;
  state.variables = { start: { phone: trigger.phone, name: trigger.name, fields: trigger.fields } };
  upsertSearchAttributes({ [STATUS_ATTRIBUTE]: ['running'], JourneyWorkflowId: [run.workflowId] });
  const nodes = new Map(definition.nodes.map((node) => [node.id, node]));
  const visits = new Map<string, number>();
  let lastCallOutcome: LeadOutcome | null = null;

  const execute = async (node: JourneyNode, visit: number): Promise<Record<string, unknown> | null> => {
    const parsed = safeParseNodeData(node);
    if (!parsed.ok)
      throw ApplicationFailure.create({
        type: ErrorCode.workflow_invalid,
        message: `node "${node.id}" has invalid data`,
        nonRetryable: true,
      });
    const render = (template: string) => renderTemplate(template, state.variables);
    switch (node.type) {
      case 'call': {
        if (!leadId)
          throw ApplicationFailure.create({
            type: ErrorCode.journey_call_without_lead,
            message: 'a run started by hand has no lead to call',
            nonRetryable: true,
          });
        // Since 'call-node-ladder-v2' the child is the current ladder, which gives a call node the same commands as
        // the lean ladder did (its calls never settle their lead); since 'call-node-lean-ladder' it was the lean
        // ladder. Asked newest first, so that a new run records one marker; a run recorded before replays its older
        // child (workflows/dial-ladder/legacy/).
        const ladder = patched(PATCHES.callNodeLadderV2.id)
          ? leadLadderWorkflowV2
          : patched(PATCHES.callNodeLeanLadder.id)
            ? leadLadderWorkflow
            : leadDialWorkflow;
        const result = await executeChild(ladder, {
          workflowId: `journey-${runId}-call-${node.id}-${visit}`,
          // The node's own agent, if it names one (published only when it is an agent of the workspace).
          args: [
            {
              leadId,
              callKey: `${node.id}.${visit}`,
              ...(typeof node.data.agentId === 'string' &&
                patched(PATCHES.callNodeAgent.id) && { agentId: node.data.agentId }),
            },
          ],
        });
        if (result.outcome === 'campaign_stopped') throw new RunEnded('cancelled', null);
        lastCallOutcome = result.outcome;
        return {
          outcome: result.outcome === 'no_calling_window' ? 'failed' : result.outcome,
          attempts: result.attempts,
          durationMs: result.lastCall?.durationMs ?? 0,
          callId: result.lastCall?.callId ?? '',
        };
      }
      case 'whatsapp': {
        const data = parsed.data as { templateName: string; language: string; parameters: string[] };
        // Since 'whatsapp-node-provider' the node sends on the WhatsApp channel (its provider, billing and
        // statuses); runs recorded before replay the embedded sender they used.
        const message = {
          messageKey: `${runId}:${node.id}:${visit}`,
          workspaceId,
          to: trigger.phone,
          templateName: data.templateName,
          language: data.language,
          parameters: data.parameters.map(render),
        };
        if (patched(PATCHES.whatsappNodeProvider.id))
          return sendJourneyWhatsApp({ ...message, runId }) as Promise<unknown> as Promise<Record<string, unknown>>;
        return sendWhatsAppTemplate(message) as Promise<unknown> as Promise<Record<string, unknown>>;
      }
      case 'wait': {
        const data = parsed.data as { seconds?: number; until?: string };
        const waitMs =
          data.seconds !== undefined
            ? data.seconds * 1000
            : (await untilLocalTime({ phone: trigger.phone, time: data.until! })).waitMs;
        state.nextWakeAt = new Date(Date.now() + waitMs).toISOString();
        await sleep(waitMs);
        state.nextWakeAt = null;
        return { wokeAt: new Date().toISOString() };
      }
      case 'branch':
        return { matched: chooseBranch(parsed.data as BranchData, state.variables) };
      case 'set_variable': {
        const data = parsed.data as { value: string; valueType: 'string' | 'number' | 'boolean' };
        const text = render(data.value);
        const value =
          data.valueType === 'number'
            ? Number(text)
            : data.valueType === 'boolean'
              ? text.trim().toLowerCase() === 'true'
              : text;
        if (typeof value === 'number' && !Number.isFinite(value)) {
          throw ApplicationFailure.create({
            type: ErrorCode.invalid_body,
            message: `node "${node.id}": "${text}" is not a number`,
            nonRetryable: true,
          });
        }
        return { value };
      }
      case 'webhook': {
        const data = parsed.data as { url: string; method: string; headers?: Record<string, string>; body?: string };
        const url = render(data.url);
        if (!/^https?:\/\//i.test(url))
          throw ApplicationFailure.create({
            type: ErrorCode.journey_webhook_rejected,
            message: `node "${node.id}": "${url}" is not an http(s) URL`,
            nonRetryable: true,
          });
        const headers = Object.fromEntries(
          Object.entries(data.headers ?? {}).map(([name, value]) => [name, render(value)]),
        );
        // Since 'journey-json-body' a JSON body gets its values as JSON (lead data cannot add keys); runs that
        // rendered one before replay the plain text they sent.
        const body =
          data.body === undefined
            ? undefined
            : isJsonBody(data.headers, data.body) && patched(PATCHES.journeyJsonBody.id)
              ? renderJsonTemplate(data.body, state.variables)
              : render(data.body);
        return callJourneyWebhook({ url, method: data.method, headers, body });
      }
      case 'review': {
        const data = parsed.data as { instructions: string };
        const decision = await awaitDecision(awaitedDecision('review', node.id, data.instructions, null));
        if (decision.action === 'end') throw new RunEnded('cancelled', null);
        const last = state.decisions.at(-1)!;
        return { decision: 'approved', note: decision.note ?? '', ...decision.output, decidedBy: last.decidedBy };
      }
      default:
        return null;
    }
  };

  /** Runs a node; a failure that retries cannot fix waits for an operator's decision. */
  const runNode = async (node: JourneyNode): Promise<Record<string, unknown> | null> => {
    const visit = (visits.get(node.id) ?? 0) + 1;
    visits.set(node.id, visit);
    state.attempt = 1;
    for (;;) {
      try {
        return await execute(node, visit);
      } catch (error) {
        if (error instanceof RunEnded || isCancellation(error)) throw error;
        const failure = rootFailure(error);
        const decision = await awaitDecision(awaitedDecision('recovery', node.id, failure.message, failure.type));
        if (decision.action === 'end') throw new RunEnded('failed', null);
        if (decision.action === 'skip') return decision.output ?? {};
        state.attempt++;
      }
    }
  };

  const finish = async (status: JourneyRunResult['status'], endNodeId: string | null): Promise<JourneyRunResult> => {
    state.endedAt = new Date().toISOString();
    await setStatus(status);
    if (leadId) {
      await finishLead({ leadId, status });
      await enqueueLeadFinished({ leadId, outcome: lastCallOutcome, attempts: visitsOf('call') });
    }
    return { status, endNodeId, variables: state.variables };
  };
  const visitsOf = (type: string) =>
    definition.nodes.filter((node) => node.type === type).reduce((sum, node) => sum + (visits.get(node.id) ?? 0), 0);

  try {
    let node = definition.nodes.find((candidate) => candidate.type === 'start')!;
    for (;;) {
      state.currentNodeId = node.id;
      // Added after runs were in flight (their histories are under test/histories): versioned, so they replay.
      if (patched(PATCHES.journeyNodeSearchAttribute.id)) upsertSearchAttributes({ JourneyNodeId: [node.id] });
      if (node.type === 'end') return await finish('completed', node.id);
      const output = node.type === 'start' ? null : await runNode(node);
      if (output) state.variables[node.id] = output;
      node = nodes.get(nextNodeId(definition, node, output))!;
    }
  } catch (error) {
    if (error instanceof RunEnded) return await finish(error.status, error.endNodeId);
    if (isCancellation(error)) return await CancellationScope.nonCancellable(() => finish('cancelled', null));
    throw error;
  }
}

function nextNodeId(definition: JourneyDefinition, node: JourneyNode, output: Record<string, unknown> | null): string {
  const outgoing = definition.edges.filter((edge) => edge.source === node.id);
  const edge =
    node.type === 'branch' ? outgoing.find((candidate) => candidate.sourceHandle === output?.matched) : outgoing[0];
  // The validator guarantees an edge; a published revision never lacks one.
  return edge!.target;
}

/** The innermost failure's type and message (an activity's or child's ApplicationFailure). */
function rootFailure(error: unknown): { type: string | null; message: string } {
  let current = error as { cause?: unknown; type?: string; message?: string } | undefined;
  while (current?.cause) current = current.cause;
  return { type: current?.type ?? null, message: current?.message ?? String(error) };
}

export type { JourneyTrigger };
