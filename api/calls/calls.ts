import type { CallIssue } from '../../generated/prisma/client';
import { CALL_ISSUE_LIMITS } from '../../lib/calls/issue-categories';
import { ErrorCode } from '../../lib/error-codes';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { workspaceCallView } from '../leads/results';
import { createWithinQuota } from '../campaigns/workspace-quota';
import { invocationsOfCall } from '../../lib/functions/function-store';
import { callIdWhere, callWithDetailsWhere, insertCallIssue, issueCountOfCall, issuesOfCall } from './call-store';

function issueView(issue: CallIssue) {
  return {
    id: issue.id,
    category: issue.category,
    note: issue.note,
    reportedBy: { keyId: issue.reportedByKeyId, memberId: issue.reportedByMemberId },
    createdAt: issue.createdAt.toISOString(),
  };
}

/** A call of the caller's workspace (403 forbidden for any other id), as GET /calls lists it plus its details. */
export async function getCall({ db }: AppServices, principal: Principal, callId: string) {
  const call = await findOwned(principal, callId, (where) => callWithDetailsWhere(db, where));
  const functionCalls = await invocationsOfCall(db, call.id);
  return {
    ...workspaceCallView(call),
    carrierStatus: call.carrierStatus,
    answeredBy: call.answeredBy,
    fromNumber: call.fromNumber,
    agentId: call.agentId,
    // As stored: written only in the shapes the route declares (lib/calls/transcript.ts, the call intelligence's).
    transcript: call.transcript ?? null,
    intelligence: call.intelligence ?? null,
    translations: call.translations.map((translation) => ({
      language: translation.language,
      provider: translation.provider,
      createdAt: translation.createdAt.toISOString(),
    })),
    issues: call.issues.map(issueView),
    recording: call.recording && {
      // starting is the product's own moment before the carrier's answer: in progress, to the caller.
      status: call.recording.status === 'starting' ? 'in-progress' : call.recording.status,
      durationSec: call.recording.durationSec,
      channels: call.recording.channels,
      deletedAt: call.recording.deletedAt?.toISOString() ?? null,
    },
    functionCalls: functionCalls.map(invocationView),
    transfer: call.transferRequestedAt && {
      mode: (call.transferMode ?? 'cold') as 'cold' | 'warm',
      status: (call.transferStatus ?? 'pending') as 'pending' | 'answered' | 'unanswered',
      summary: call.transferSummary,
      requestedAt: call.transferRequestedAt.toISOString(),
    },
  };
}

function invocationView(invocation: Awaited<ReturnType<typeof invocationsOfCall>>[number]) {
  return {
    id: invocation.id,
    functionId: invocation.functionId,
    name: invocation.function.name,
    toolCallId: invocation.toolCallId,
    idempotencyKey: invocation.idempotencyKey,
    arguments: invocation.arguments as Record<string, unknown>,
    status: invocation.status as 'sending' | 'ok' | 'http_error' | 'timed_out' | 'refused' | 'too_large' | 'unknown',
    httpStatus: invocation.httpStatus,
    durationMs: invocation.durationMs,
    resultBytes: invocation.resultBytes,
    createdAt: invocation.createdAt.toISOString(),
  };
}

const findOwnedCallId = ({ db }: AppServices, principal: Principal, callId: string) =>
  findOwned(principal, callId, (where) => callIdWhere(db, where));

export async function listCallIssues(services: AppServices, principal: Principal, callId: string) {
  const call = await findOwnedCallId(services, principal, callId);
  const issues = await issuesOfCall(services.db, call.id);
  return issues.map(issueView);
}

/**
 * Records a problem reported with a call, naming the key and the member that reported it. Reports on one
 * call take turns on an advisory lock (not the call's row, which the carrier's events update), so the cap
 * holds under concurrency.
 */
export async function reportCallIssue(
  services: AppServices,
  principal: Principal,
  callId: string,
  input: { category: string; note: string },
) {
  const call = await findOwnedCallId(services, principal, callId);
  const limit = CALL_ISSUE_LIMITS.issuesPerCall;
  const issue = await createWithinQuota(
    services.db,
    {
      workspaceId: principal.workspaceId,
      holderId: call.id,
      noun: 'call issues',
      limit,
      code: ErrorCode.call_issue_limit_reached,
      count: (tx) => issueCountOfCall(tx, call.id),
      detail: `a call holds at most ${limit} issues; this one holds as many`,
    },
    (tx) =>
      insertCallIssue(tx, {
        workspaceId: principal.workspaceId,
        callId: call.id,
        category: input.category,
        note: input.note,
        reportedByKeyId: principal.keyId,
        reportedByMemberId: principal.memberId,
      }),
  );
  return issueView(issue);
}
