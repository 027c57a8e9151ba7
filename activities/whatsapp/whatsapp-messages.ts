import { ApplicationFailure } from '@temporalio/common';
import { HoldAlreadySettledError } from '../../lib/credits/credit-errors';
import { prismaCreditStore, type CreditActor } from '../../lib/credits/ledger-store';
import { settleWhatsAppMessageHold } from '../../lib/credits/whatsapp-billing';
import type { Database } from '../../lib/database';
import { ErrorCode } from '../../lib/error-codes';
import { WhatsAppProviderError, type WhatsAppProvider, type WhatsAppSendRequest } from '../../lib/whatsapp/provider';

/** The actor of the entries a message's workflow writes. */
const WHATSAPP_BILLING_ACTOR: CreditActor = { type: 'system', id: 'whatsAppMessageWorkflow' };

/** HTTP statuses of a provider refusal that a retry cannot change (400: the request; 404: what it names). */
const isRefusal = (error: WhatsAppProviderError) =>
  error.httpStatus >= 400 && error.httpStatus < 500 && error.httpStatus !== 429;

export interface WhatsAppMessageDependencies {
  db: Database;
  /** The provider messages go through; unset, sending fails (a worker configured without one). */
  whatsappProvider?: WhatsAppProvider;
}

/**
 * The activities of one outbound WhatsApp message (workflows/whatsapp/whatsapp-message.ts). The message is
 * recorded, checked and held for by whoever sends it (the API, a campaign's lead) before its workflow
 * starts; these hand it to the provider at most once and settle a refusal. Statuses after that arrive
 * as the provider's webhooks (api/whatsapp/whatsapp-webhook.ts), which post or void the hold.
 */
export function createWhatsAppMessageActivities({ db, whatsappProvider }: WhatsAppMessageDependencies) {
  return {
    /**
     * Hands the message to the provider with its id as the client key (a retry answers the first send)
     * and as the callback data the provider echoes in its status webhooks, and records the provider's id.
     * A message already handed over, failed, or gone is left as it is. A refusal by the provider (its 4xx
     * other than throughput) fails for good with the platform's code; anything else is retried.
     */
    async sendWhatsAppMessage({ messageId }: { messageId: string }): Promise<{ providerMessageId: string | null }> {
      if (!whatsappProvider) throw new Error('this worker has no WhatsApp provider');
      const message = await db.whatsAppMessage.findUnique({ where: { id: messageId } });
      if (!message || message.status === 'failed' || message.providerMessageId)
        return { providerMessageId: message?.providerMessageId ?? null };
      const [sender, conversation, template] = await Promise.all([
        db.whatsAppSender.findUniqueOrThrow({ where: { id: message.senderId } }),
        db.whatsAppConversation.findUniqueOrThrow({ where: { id: message.conversationId } }),
        message.templateId ? db.whatsAppTemplate.findUnique({ where: { id: message.templateId } }) : null,
      ]);
      const request: WhatsAppSendRequest = {
        phoneNumberId: sender.phoneNumberId,
        to: conversation.contactE164,
        clientKey: message.id,
        callbackData: message.id,
        message:
          message.type === 'template' && template
            ? {
                type: 'template',
                template: {
                  name: template.name,
                  language: template.language,
                  parameters: (message.parameters as string[] | null) ?? [],
                },
              }
            : { type: 'text', text: message.body },
      };
      try {
        const { messageId: providerMessageId } = await whatsappProvider.sendMessage(request);
        await db.whatsAppMessage.updateMany({
          where: { id: messageId, providerMessageId: null },
          data: { providerMessageId },
        });
        return { providerMessageId };
      } catch (error) {
        if (error instanceof WhatsAppProviderError && isRefusal(error))
          throw ApplicationFailure.create({
            type: ErrorCode.provider_error,
            message: error.message,
            details: [{ code: error.code, title: error.title, httpStatus: error.httpStatus }],
            nonRetryable: true,
          });
        throw error;
      }
    },

    /** Marks a message the provider refused failed, with its code and title, unless a webhook moved it on meanwhile. */
    async failWhatsAppMessage(failure: { messageId: string; errorCode: number | null; errorTitle: string }) {
      await db.whatsAppMessage.updateMany({
        where: { id: failure.messageId, status: 'accepted' },
        data: {
          status: 'failed',
          errorCode: failure.errorCode,
          errorTitle: failure.errorTitle.slice(0, 500),
          failedAt: new Date(),
        },
      });
    },

    /** Voids the hold of a failed message (idempotent; a hold settled by a webhook meanwhile is left as it is). */
    async voidWhatsAppMessageHold({ messageId }: { messageId: string }) {
      const message = await db.whatsAppMessage.findUnique({
        where: { id: messageId },
        select: { workspaceId: true, status: true },
      });
      if (!message || message.status !== 'failed') return;
      try {
        await settleWhatsAppMessageHold(
          prismaCreditStore(db),
          { workspaceId: message.workspaceId, messageId, delivered: false },
          WHATSAPP_BILLING_ACTOR,
        );
      } catch (error) {
        if (!(error instanceof HoldAlreadySettledError)) throw error;
      }
    },
  };
}

export type WhatsAppMessageActivities = ReturnType<typeof createWhatsAppMessageActivities>;
