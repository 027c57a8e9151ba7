import { randomUUID } from 'node:crypto';
import { ZodError } from 'zod';
import { prismaCreditStore } from '../../lib/credits/ledger-store';
import { settleWhatsAppMessageHold } from '../../lib/credits/whatsapp-billing';
import { ErrorCode } from '../../lib/error-codes';
import { isOnDoNotCall } from '../../lib/leads/do-not-call';
import { poolSql } from '../../lib/run-sql';
import { customerServiceWindow } from '../../lib/whatsapp/customer-service-window';
import { recordOutboundMessage } from '../../lib/whatsapp/outbound-message';
import { WHATSAPP_ERROR } from '../../lib/whatsapp/provider';
import { assertSenderConnected } from '../../lib/whatsapp/simulator-stand-in';
import { renderTemplateBody } from '../../lib/whatsapp/template-body';
import { startWhatsAppMessage } from '../../lib/temporal/whatsapp';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { paymentRequired } from '../credits/credits';
import type { AppServices } from '../app-services';
import { simulatedSenderIds } from '../../lib/whatsapp/senders';
import { isSimulatedProvider } from '../../lib/simulators';
import type { WhatsAppMessage } from '../../generated/prisma/client';
import { whatsAppMessageView } from './whatsapp-message-view';
import { assertSenderSendable, assertTemplateSendable } from './whatsapp-sendable';
import {
  conversationLastInbound,
  deleteUnsentMessage,
  messageOfIdempotencyKey,
  whatsAppSenderWhere,
  whatsAppTemplateWhere,
} from './whatsapp-store';

export interface SendRequest {
  senderId: string;
  to: string;
  template?: { id: string; variables: string[] } | undefined;
  text?: string | undefined;
}

const invalid = (path: string[], message: string, input: unknown) =>
  new ZodError([{ code: 'custom', path, message, input }]);

/** The template to send with: the workspace's, APPROVED, given exactly its variables. */
async function approvedTemplate(
  services: AppServices,
  workspaceId: string,
  template: { id: string; variables: string[] },
) {
  const row = await whatsAppTemplateWhere(services.db, { id: template.id, workspaceId });
  assertTemplateSendable(row, template.id, ['template', 'id']);
  if (template.variables.length !== row.variableCount)
    throw invalid(
      ['template', 'variables'],
      `the template has ${row.variableCount} variable(s): give exactly ${row.variableCount} value(s)`,
      template.variables,
    );
  return row;
}

/** A message sent earlier with the same Idempotency-Key, marked by its own sender (which the request may not name). */
async function viewOfEarlier(db: AppServices['db'], message: WhatsAppMessage) {
  const simulated = await simulatedSenderIds(db, [message.senderId]);
  return whatsAppMessageView(message, simulated.has(message.senderId));
}

/**
 * Sends one message from a sender of the workspace (docs/features/whatsapp/sending.md): never to a number on the
 * workspace's Do-Not-Call list (409 number_on_do_not_call); a template message (APPROVED, with its variables) at any
 * time, or free-form text only inside the customer-service window the contact's last inbound message opened (else 409
 * whatsapp_window_closed, the platform's 131047).
 * Recorded with its price held (402 insufficient_credits: nothing recorded), then handed to the provider
 * by its workflow; 202 with the message, accepted. An Idempotency-Key answers the message first sent with it.
 */
export async function sendWhatsAppMessage(
  services: AppServices,
  principal: Principal,
  request: SendRequest,
  idempotencyKey: string | undefined,
) {
  const { db, temporal, taskQueue } = services;
  const { workspaceId } = principal;
  if (idempotencyKey !== undefined) {
    const earlier = await messageOfIdempotencyKey(db, workspaceId, idempotencyKey);
    if (earlier) return { message: await viewOfEarlier(db, earlier), deduplicated: true };
  }
  const sender = await whatsAppSenderWhere(db, { id: request.senderId, workspaceId });
  assertSenderSendable(sender, request.senderId, ['senderId']);
  // The contact asked not to be contacted (docs/features/leads.md#the-do-not-call-list): nothing recorded or held.
  if (await isOnDoNotCall(poolSql(services.sql), workspaceId, request.to))
    throw new Refusal(ErrorCode.number_on_do_not_call, {
      detail: `${request.to} is on the workspace's Do-Not-Call list: no message is sent to it`,
    });
  await assertSenderConnected(db, services.simulators, sender);
  const template = request.template ? await approvedTemplate(services, workspaceId, request.template) : null;
  if (!template) {
    const conversation = await conversationLastInbound(db, sender.id, request.to);
    const window = customerServiceWindow(conversation?.lastInboundAt ?? null);
    if (!window.open)
      throw new Refusal(ErrorCode.whatsapp_window_closed, {
        detail:
          "free-form text goes only within 24 hours of the contact's last message; send an approved template to re-engage",
        providerCode: WHATSAPP_ERROR.reEngagement,
        windowExpiredAt: window.expiresAt?.toISOString() ?? null,
      });
  }
  const id = randomUUID();
  const recorded = await db
    .$transaction((tx) =>
      recordOutboundMessage(
        tx,
        {
          id,
          workspaceId,
          senderId: sender.id,
          to: request.to,
          type: template ? 'template' : 'text',
          templateId: template?.id ?? null,
          category: template?.category ?? null,
          body: template ? renderTemplateBody(template.body, request.template!.variables) : request.text!,
          parameters: template ? request.template!.variables : null,
          idempotencyKey: idempotencyKey ?? null,
        },
        { type: 'api_key', id: principal.keyId },
        services.simulators,
      ),
    )
    .catch(async (error: unknown) => {
      // The same key, concurrently: the other request recorded the message.
      if (idempotencyKey !== undefined) {
        const other = await messageOfIdempotencyKey(db, workspaceId, idempotencyKey);
        if (other) return other;
      }
      throw paymentRequired(error);
    });
  if (recorded.id !== id) return { message: await viewOfEarlier(db, recorded), deduplicated: true };
  try {
    // Already started is no failure (lib/temporal/whatsapp.ts).
    await startWhatsAppMessage(temporal, taskQueue, { id, workspaceId });
  } catch (error) {
    // Never started, never handed over: withdrawn with its hold (else the sweep of abandoned holds voids it).
    await withdraw(services, principal, id);
    throw error;
  }
  return { message: whatsAppMessageView(recorded, isSimulatedProvider(sender.provider)), deduplicated: false };
}

async function withdraw(services: AppServices, principal: Principal, messageId: string) {
  await deleteUnsentMessage(services.db, messageId);
  await settleWhatsAppMessageHold(
    prismaCreditStore(services.db),
    { workspaceId: principal.workspaceId, messageId, delivered: false },
    { type: 'api_key', id: principal.keyId },
  ).catch(() => {});
}
