import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { Prisma } from '../../generated/prisma/client';
import { startCrmDeliveryWorkflow } from '../../lib/temporal/crm';
import { payloadShape } from '../../lib/crm/payload-shape';
import { webhookSecretOf } from '../../lib/crm/webhook-secret';
import { SHOPIFY_HEADERS, verifyShopifySignature } from '../../lib/crm/shopify-webhook';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { rawBodyOf } from '../http/register-routes';
import { crmDeliveryWorkflowId } from '../../lib/temporal/workflow-ids';
import { isUuid } from '../../lib/uuid';
import type { AppServices } from '../app-services';
import { deliveryOfEvent, insertDeliveryOnce, liveConnectionSecret } from './crm-store';

interface VerifiedConnection {
  id: string;
  workspaceId: string;
}

/** The connection whose signature a request passed (assertSignedByShop), for its handler. */
const verified = new WeakMap<Request, VerifiedConnection>();

/** The longest topic and event id kept (Shopify's are a few dozen characters). */
const HEADER_MAX = 200;
const header = (req: Request, name: string) => req.get(name)?.trim().slice(0, HEADER_MAX) || undefined;

/**
 * Before the body is parsed: the connection in the path must be live (else 404 not_found), X-Shopify-Hmac-Sha256 must
 * sign the raw body with its secret (opened from its envelope for this check only) and X-Shopify-Shop-Domain must name
 * its shop. Otherwise 401 invalid_signature. Nothing is written either way: an unsigned flood leaves no row.
 */
export async function assertSignedByShop(req: Request, { db, carrierKeyring }: AppServices): Promise<void> {
  const id = String(req.params.id);
  const connection = isUuid(id) ? await liveConnectionSecret(db, id) : null;
  if (!connection) throw new Refusal(ErrorCode.not_found, { detail: 'no such CRM connection' });
  const secret = webhookSecretOf(carrierKeyring, connection);
  const signed = secret !== null && verifyShopifySignature(rawBodyOf(req), req.get(SHOPIFY_HEADERS.hmac), secret);
  if (!signed || header(req, SHOPIFY_HEADERS.shopDomain)?.toLowerCase() !== connection.shopDomain)
    throw new Refusal(ErrorCode.invalid_signature);
  verified.set(req, { id: connection.id, workspaceId: connection.workspaceId });
}

export interface CrmWebhookOutcome {
  received: true;
  deliveryId: string;
  /** A redelivery of an event already received (same X-Shopify-Event-Id): nothing changed. */
  duplicate: boolean;
}

/**
 * A signed delivery: stored `received` with its shape and payload (once per event id: a redelivery is
 * answered the first one's id and changes nothing) and answered; its durable processing
 * (workflows/crm/crm-delivery.ts) is started after the answer (services.startsAfterAnswer). The stored row is
 * the outbox: a start that fails, or a process that dies first, leaves the delivery `received` until the
 * worker's sweep starts it (lib/crm/deliveries.ts).
 */
export async function receiveCrmWebhook(
  services: AppServices,
  req: Request,
  payload: Record<string, unknown>,
): Promise<CrmWebhookOutcome> {
  const connection = verified.get(req);
  if (!connection) throw new Error('receiveCrmWebhook without assertSignedByShop');
  const { db } = services;
  const eventId = header(req, SHOPIFY_HEADERS.eventId) ?? header(req, SHOPIFY_HEADERS.webhookId) ?? null;
  const id = randomUUID();
  const inserted = await insertDeliveryOnce(db, {
    id,
    connectionId: connection.id,
    status: 'received',
    topic: header(req, SHOPIFY_HEADERS.topic) ?? '',
    eventId,
    shape: payloadShape(payload) as Prisma.InputJsonValue,
    payload: payload as Prisma.InputJsonValue,
  });
  if (!inserted) {
    const first = await deliveryOfEvent(db, connection.id, eventId!);
    // The first one still waits (Temporal was down): its start is tried again, which is idempotent.
    if (first.status === 'received') startSoon(services, first.id);
    return { received: true, deliveryId: first.id, duplicate: true };
  }
  startSoon(services, id);
  return { received: true, deliveryId: id, duplicate: false };
}

function startSoon({ temporal, taskQueue, startsAfterAnswer }: AppServices, deliveryId: string) {
  startsAfterAnswer.offer(crmDeliveryWorkflowId(deliveryId), () =>
    startCrmDeliveryWorkflow(temporal, taskQueue, deliveryId),
  );
}
