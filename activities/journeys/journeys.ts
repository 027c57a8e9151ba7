import { ApplicationFailure } from '@temporalio/common';
import { Prisma } from '../../generated/prisma/client';
import { nextAllowedInstant } from '../../lib/dial-ladder/calling-window';
import { ErrorCode } from '../../lib/error-codes';
import type { RecordedRecovery } from '../../lib/journeys/awaiting';
import type { JourneyDefinition } from '../../lib/journeys/definition';
import { isOnDoNotCall } from '../../lib/leads/do-not-call';
import { finishLeadOnce } from '../../lib/leads/lead-final-status';
import { isFinalRunStatus, type FinalRunStatus, type JourneyRunStatus } from '../../lib/journeys/run-statuses';
import type { ActivityDependencies } from '../dependencies';
import { EgressError, type Egress } from '../../lib/http/egress';
import { isJsonBody } from '../../lib/journeys/render-json';
import { timeZonesOf } from '../../lib/dial-ladder/phone-time-zones';

export interface JourneyTrigger {
  phone: string | null;
  name: string | null;
  fields: Record<string, unknown>;
}

export interface LoadedJourneyRun {
  workspaceId: string;
  /** The journey's id, under the name recorded in the histories of runs in flight (a Temporal payload). */
  workflowId: string;
  leadId: string | null;
  definition: JourneyDefinition;
  trigger: JourneyTrigger;
}

export interface RunProgress {
  runId: string;
  status: JourneyRunStatus;
  currentNodeId: string | null;
  variables?: Record<string, unknown>;
  /** What the run waits for while needs_recovery; null clears it (the column then holds SQL NULL, not a JSON value). */
  recovery?: RecordedRecovery | null;
}

export interface DecisionRecord {
  runId: string;
  nodeId: string;
  action: string;
  output?: Record<string, unknown>;
  note?: string;
  decidedBy: string;
  via: string;
}

export interface WebhookRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * A body without a Content-Type header gets one: application/json for a JSON body (as the workflow decided to render
 * it), else text/plain;charset=UTF-8, what fetch sent before the egress guard replaced it.
 */
function withContentType(headers: Record<string, string>, body: string | undefined): Record<string, string> {
  if (body === undefined || Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) return headers;
  return { ...headers, 'content-type': isJsonBody(headers, body) ? 'application/json' : 'text/plain;charset=UTF-8' };
}

function runNotFound(runId: string) {
  return ApplicationFailure.create({
    type: ErrorCode.journey_run_not_found,
    message: `journey run ${runId} not found`,
    nonRetryable: true,
  });
}

/** The revision the run was enrolled into, and what it started with. */
export async function loadJourneyRun(
  { db }: Pick<ActivityDependencies, 'db'>,
  { runId }: { runId: string },
): Promise<LoadedJourneyRun> {
  const run = await db.journeyRun.findUnique({ where: { id: runId } });
  if (!run) throw runNotFound(runId);
  const revision = await db.journeyRevision.findUniqueOrThrow({
    where: { journeyId_revision: { journeyId: run.journeyId, revision: run.revision } },
  });
  return {
    workspaceId: run.workspaceId,
    workflowId: run.journeyId,
    leadId: run.leadId,
    definition: revision.definition as unknown as JourneyDefinition,
    trigger: run.trigger as unknown as JourneyTrigger,
  };
}

/** Mirrors the run's status into its row (the API lists and filters runs from there); a final status also finishes its lead. */
export async function recordJourneyRun(
  { db }: Pick<ActivityDependencies, 'db'>,
  { runId, status, currentNodeId, variables, recovery }: RunProgress,
): Promise<void> {
  const final = isFinalRunStatus(status);
  const run = await db.journeyRun.update({
    where: { id: runId },
    data: {
      status,
      currentNodeId,
      // Not { set: null }: on a Json column Prisma would store that object itself.
      ...(recovery !== undefined && { recovery: recovery ?? Prisma.DbNull }),
      ...(variables && { variables: variables as object }),
      ...(final && { endedAt: new Date() }),
    },
    select: { leadId: true },
  });
  // Through the one rule: a lead final already (its campaign stopped) keeps its first final status.
  if (final && run.leadId) await finishLeadOnce(db.sql, run.leadId, status as FinalRunStatus);
}

export async function recordJourneyDecision(
  { db }: Pick<ActivityDependencies, 'db'>,
  decision: DecisionRecord,
): Promise<void> {
  await db.journeyDecision.create({ data: { ...decision, output: decision.output as object | undefined } });
}

/** Milliseconds until the next HH:MM on the lead's local clock (the first zone of the number). */
export async function untilLocalTime(
  _dependencies: unknown,
  {
    phone,
    time,
  }: {
    phone: string | null;
    time: string;
  },
): Promise<{ waitMs: number; at: string }> {
  const [zone] = phone ? timeZonesOf(phone) : ['UTC'];
  const [hours, minutes] = time.split(':').map(Number) as [number, number];
  const next =
    minutes === 59
      ? hours === 23
        ? '24:00'
        : `${String(hours + 1).padStart(2, '0')}:00`
      : `${time.slice(0, 3)}${String(minutes + 1).padStart(2, '0')}`;
  const now = new Date();
  // Strictly after this minute: "until 09:00" asked at 09:00:30 means tomorrow's.
  const at = nextAllowedInstant(
    new Date(now.getTime() + 60_000 - (now.getTime() % 60_000)),
    { start: time, end: next, days: [1, 2, 3, 4, 5, 6, 7] },
    [zone!],
  )!;
  return { waitMs: Math.max(at.getTime() - now.getTime(), 0), at: at.toISOString() };
}

/**
 * A webhook node's request. 2xx: its status and body (JSON, or { text }). 4xx other than 408/429:
 * the receiver refused it; retrying cannot help, so the failure is final (the run then needs
 * recovery). 5xx, 408, 429 and network failures are retried by the activity's policy.
 */
export async function callJourneyWebhook(
  { egress }: { egress: Egress },
  { url, method, headers, body }: WebhookRequest,
): Promise<{ status: number; body: unknown }> {
  let response: { status: number; text: string };
  try {
    const sent = method === 'GET' ? undefined : body;
    response = await egress.request(url, { method, headers: withContentType(headers, sent), body: sent });
  } catch (error) {
    // The guard's word only ("refused", "timed out", "too large"), retried alike: a refused address and a
    // closed port must look the same to the tenant who reads awaiting.reason (docs/egress.md).
    if (!(error instanceof EgressError)) throw error;
    throw ApplicationFailure.create({
      type: ErrorCode.journey_webhook_failed,
      message: `${method} ${url}: ${error.failure}`,
    });
  }
  const { text } = response;
  if (response.status < 200 || response.status > 299) {
    const final = response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429;
    throw ApplicationFailure.create({
      type: final ? ErrorCode.journey_webhook_rejected : ErrorCode.journey_webhook_failed,
      message: `${method} ${url} answered ${response.status}`,
      nonRetryable: final,
    });
  }
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = { text };
  }
  return { status: response.status, body: parsed };
}

/**
 * The whatsapp node of runs recorded before patch whatsapp-node-provider: the embedded sender. Never to a number on
 * the workspace's Do-Not-Call list (docs/features/leads.md#the-do-not-call-list): a non-retryable
 * number_on_do_not_call, nothing sent.
 */
export async function sendWhatsAppTemplate(
  { whatsapp, db }: Pick<ActivityDependencies, 'whatsapp' | 'db'>,
  message: {
    messageKey: string;
    workspaceId: string;
    to: string | null;
    templateName: string;
    language: string;
    parameters: string[];
  },
) {
  if (!message.to)
    throw ApplicationFailure.create({
      type: ErrorCode.journey_call_without_lead,
      message: 'the run has no phone number to message',
      nonRetryable: true,
    });
  if (await isOnDoNotCall(db.sql, message.workspaceId, message.to))
    throw ApplicationFailure.create({
      type: ErrorCode.number_on_do_not_call,
      message: `${message.to} is on the workspace's Do-Not-Call list`,
      nonRetryable: true,
    });
  return whatsapp.sendTemplate({ ...message, to: message.to });
}
