import type { LeadMessageOutcome } from '../../lib/whatsapp/lead-message-state';
import { activityInfo } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { leadWorkflowKind } from '../../lib/campaigns/lead-workflow-kind';
import { ErrorCode } from '../../lib/error-codes';
import {
  leadMessageOutcome,
  leadMessages,
  leadMessageView,
  type LeadMessageView,
} from '../../lib/whatsapp/lead-message-result';
import { generateDeliveryId, signWebhook } from '../../lib/result-webhooks/result-webhooks';
import { ENDPOINT_SECRET_COLUMNS, openEndpointSecret } from '../../lib/result-webhooks/endpoint-secrets';
import { startWebhookDelivery } from '../../lib/temporal/result-webhooks';
import type { LeadDialResult } from '../../lib/dial-ladder/lead-state';
import type { ActivityDependencies } from '../dependencies';
import { EgressError, type Egress } from '../../lib/http/egress';
import type { Database } from '../../lib/database';
import { isSimulatedProvider } from '../../lib/simulators';

export const LEAD_FINISHED = 'lead.finished';

/** A receiver that has not answered by then has failed this attempt. */
const DELIVERY_TIMEOUT_MS = 10_000;
const MAX_ERROR_LENGTH = 500;

export interface LeadFinishedInput {
  leadId: string;
  /** The lead workflow's result (a WHATSAPP lead's: its message's); without it, the lead's row and calls tell what they can. */
  outcome?: LeadDialResult['outcome'] | LeadMessageOutcome;
  attempts?: number;
}

export interface LeadFinishedEvent {
  type: typeof LEAD_FINISHED;
  timestamp: string;
  data: {
    leadId: string;
    campaignId: string;
    status: string;
    outcome: string | null;
    attempts: number;
    calls: Array<{
      attempt: number;
      outcome: string | null;
      durationMs: number | null;
      startedAt: string;
      /** The simulated carrier placed it (docs/configuration.md#simulators): nobody was called. */
      simulated: boolean;
    }>;
    /** A WHATSAPP campaign's lead only: its one template message (null: none was sent), as its result shows it. */
    message?: LeadMessageView | null;
  };
}

export type DeliveryResult = { done: true; status: 'delivered' | 'failed' };

/** The guard's word ("refused", "timed out", "too large"): lastError is the tenant's to read, so it names nothing reached. */
function describeFailure(error: unknown): string {
  if (error instanceof EgressError) return error.failure;
  throw error;
}

type FinishedLead = {
  campaignId: string;
  status: string;
  campaign: { kind: 'CLASSIC' | 'JOURNEY'; channel: string };
  calls: Array<{
    attempt: number;
    outcome: string | null;
    durationMs: number | null;
    startedAt: Date;
    provider: string;
  }>;
};

/** What the result webhook activities use: the egress guard is the worker's one (activities/index.ts builds it). */
export type ResultWebhookDependencies = Pick<ActivityDependencies, 'db' | 'temporal' | 'secretsKeyring'> & {
  egress: Egress;
};

/**
 * The event's data: the lead's status, the outcome and attempts its workflow gave (else what its row
 * tells), and its calls; a WHATSAPP campaign's lead adds its message (docs/features/result-webhooks.md).
 */
async function leadFinishedData(
  db: Database,
  leadId: string,
  lead: FinishedLead,
  given: Pick<LeadFinishedInput, 'outcome' | 'attempts'>,
): Promise<LeadFinishedEvent['data']> {
  const data = {
    leadId,
    campaignId: lead.campaignId,
    status: lead.status,
    outcome: given.outcome !== undefined ? given.outcome : (lead.calls.at(-1)?.outcome ?? null),
    attempts: given.attempts ?? lead.calls.length,
    calls: lead.calls.map((call) => ({
      attempt: call.attempt,
      outcome: call.outcome,
      durationMs: call.durationMs,
      startedAt: call.startedAt.toISOString(),
      simulated: isSimulatedProvider(call.provider),
    })),
  };
  if (leadWorkflowKind(lead.campaign) !== 'WHATSAPP') return data;
  const message = (await leadMessages(db, [leadId])).get(leadId);
  return {
    ...data,
    outcome: given.outcome !== undefined ? given.outcome : message ? leadMessageOutcome(message, lead.status) : null,
    attempts: given.attempts ?? (message ? 1 : 0),
    message: message ? leadMessageView(message) : null,
  };
}

/**
 * One lead.finished event per live endpoint of the lead's workspace, each a delivery row with a
 * Temporal workflow of its own that delivers it. (endpointId, eventKey) is unique, so an activity
 * retried after a crash finds the rows it made and only starts what is not started yet.
 */
export async function enqueueLeadFinished(
  { db, temporal }: Pick<ResultWebhookDependencies, 'db' | 'temporal'>,
  { leadId, outcome, attempts }: LeadFinishedInput,
): Promise<{ deliveries: number }> {
  const lead = await db.lead.findUnique({
    where: { id: leadId },
    select: {
      workspaceId: true,
      campaignId: true,
      status: true,
      campaign: { select: { kind: true, channel: true } },
      calls: {
        select: { attempt: true, outcome: true, durationMs: true, startedAt: true, provider: true },
        orderBy: { attempt: 'asc' },
      },
    },
  });
  if (!lead)
    throw ApplicationFailure.create({
      type: ErrorCode.lead_not_found,
      message: `lead ${leadId} not found`,
      nonRetryable: true,
    });
  const eventKey = `${LEAD_FINISHED}:${leadId}`;
  const endpoints = await db.resultWebhookEndpoint.findMany({
    where: { workspaceId: lead.workspaceId, deletedAt: null },
    select: { id: true },
  });
  if (endpoints.length) {
    const data = await leadFinishedData(db, leadId, lead, { outcome, attempts });
    const event: LeadFinishedEvent = { type: LEAD_FINISHED, timestamp: new Date().toISOString(), data };
    await db.resultWebhookDelivery.createMany({
      data: endpoints.map((endpoint) => ({
        id: generateDeliveryId(),
        workspaceId: lead.workspaceId,
        endpointId: endpoint.id,
        eventKey,
        eventType: LEAD_FINISHED,
        payload: event as object,
      })),
      skipDuplicates: true,
    });
  }
  const pending = await db.resultWebhookDelivery.findMany({
    where: { workspaceId: lead.workspaceId, eventKey, status: 'pending' },
    select: { id: true },
  });
  const { taskQueue } = activityInfo();
  await Promise.all(pending.map(({ id }) => startWebhookDelivery(temporal, taskQueue, id, lead.workspaceId)));
  return { deliveries: pending.length };
}

/**
 * One attempt: POSTs the event, signed, with the delivery's id as webhook-id. A 2xx marks it
 * delivered; anything else is recorded and thrown as a retryable webhook_delivery_failed, so that
 * Temporal schedules the next attempt. An endpoint deleted meanwhile ends the delivery as failed.
 */
export async function deliverWebhook(
  { db, secretsKeyring, egress }: Pick<ResultWebhookDependencies, 'db' | 'secretsKeyring' | 'egress'>,
  { deliveryId }: { deliveryId: string },
): Promise<DeliveryResult> {
  const delivery = await db.resultWebhookDelivery.findUnique({
    where: { id: deliveryId },
    include: { endpoint: { select: { ...ENDPOINT_SECRET_COLUMNS, deletedAt: true } } },
  });
  if (!delivery) {
    throw ApplicationFailure.create({
      type: ErrorCode.webhook_delivery_failed,
      message: `delivery ${deliveryId} not found`,
      nonRetryable: true,
    });
  }
  if (delivery.status !== 'pending')
    return { done: true, status: delivery.status === 'delivered' ? 'delivered' : 'failed' };
  if (delivery.endpoint.deletedAt) {
    await db.resultWebhookDelivery.update({
      where: { id: deliveryId },
      data: { status: 'failed', lastError: 'endpoint deleted' },
    });
    return { done: true, status: 'failed' };
  }

  // Opened for this attempt only (SECRETS_KEYS); a missing key ring fails the attempt, retried like any other.
  const secret = openEndpointSecret(secretsKeyring, delivery.endpoint);
  const body = JSON.stringify(delivery.payload);
  const timestamp = Math.floor(Date.now() / 1000);
  let statusCode: number | null = null;
  let failure: string | null = null;
  try {
    const response = await egress.request(delivery.endpoint.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(secret, delivery.id, timestamp, body),
      },
      body,
      readBody: false,
      timeoutMs: DELIVERY_TIMEOUT_MS,
    });
    statusCode = response.status;
    if (statusCode < 200 || statusCode > 299) failure = `HTTP ${statusCode}`;
  } catch (error) {
    failure = describeFailure(error);
  }

  await db.resultWebhookDelivery.update({
    where: { id: deliveryId },
    data: {
      attempts: { increment: 1 },
      lastStatusCode: statusCode,
      lastError: failure,
      ...(failure === null ? { status: 'delivered', deliveredAt: new Date() } : {}),
    },
  });
  if (failure !== null) {
    throw ApplicationFailure.create({
      type: ErrorCode.webhook_delivery_failed,
      message: `delivery ${deliveryId}: ${failure}`,
      nonRetryable: false,
    });
  }
  return { done: true, status: 'delivered' };
}

/** The retries are spent: the delivery ends failed, keeping the last attempt's error. */
export async function giveUpWebhook(
  { db }: Pick<ResultWebhookDependencies, 'db'>,
  { deliveryId, reason }: { deliveryId: string; reason: string },
): Promise<void> {
  const delivery = await db.resultWebhookDelivery.findUnique({
    where: { id: deliveryId },
    select: { lastError: true },
  });
  const lastError = delivery?.lastError ? `${reason}; last attempt: ${delivery.lastError}` : reason;
  await db.resultWebhookDelivery.updateMany({
    where: { id: deliveryId, status: 'pending' },
    data: { status: 'failed', lastError: lastError.slice(0, MAX_ERROR_LENGTH * 2) },
  });
}
