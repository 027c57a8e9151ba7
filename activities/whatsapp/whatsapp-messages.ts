import { ApplicationFailure } from '@temporalio/common';
import type { AmbiguousResendRule } from '../../lib/whatsapp/ambiguous-resend';
import { HoldAlreadySettledError } from '../../lib/credits/credit-errors';
import { prismaCreditStore, type CreditActor } from '../../lib/credits/ledger-store';
import { settleWhatsAppMessageHold } from '../../lib/credits/whatsapp-billing';
import type { Database } from '../../lib/database';
import { ErrorCode } from '../../lib/error-codes';
import type { BoundActivities } from '../bind-activities';
import { rowNotFound } from '../../lib/temporal/refusal';
import { AmbiguousSendError } from '../../lib/whatsapp/graph-client';
import { backOffSender } from '../../lib/whatsapp/whatsapp-store';
import {
  WHATSAPP_ERROR,
  WhatsAppProviderError,
  type WhatsAppProvider,
  type WhatsAppSendRequest,
} from '../../lib/whatsapp/provider';

/** The actor of the entries a message's workflow writes. */
const WHATSAPP_BILLING_ACTOR: CreditActor = { type: 'system', id: 'whatsAppMessageWorkflow' };

/** HTTP statuses of a provider refusal that a retry cannot change (400: the request; 404: what it names). */
const isRefusal = (error: WhatsAppProviderError) =>
  error.httpStatus >= 400 && error.httpStatus < 500 && error.httpStatus !== 429;

/** Meta's throughput (130429) and pair-rate (131056) refusals: the number waits, then the send is tried again. */
const BACKOFF_MS: Readonly<Record<number, number>> = {
  [WHATSAPP_ERROR.rateLimited]: 1_000,
  // Meta's pair rate: about one message every 6 seconds from a number to the same recipient.
  [WHATSAPP_ERROR.pairRateLimited]: 6_000,
};

/** A send not taken for throughput: retried after the sender's backoff (the workflow's retry policy, this delay). */
const backoffFailure = (message: string, delayMs: number) =>
  ApplicationFailure.create({ type: 'whatsapp_sender_backoff', message, nextRetryDelay: delayMs });

export interface WhatsAppMessageDependencies {
  db: Database;
  /** The provider messages go through; unset, sending fails (a worker configured without one). */
  whatsappProvider?: WhatsAppProvider;
  /** WHATSAPP_RESEND_AFTER_SECONDS in ms (default 900 s). */
  whatsappResendAfterMs?: number;
  /** WHATSAPP_AMBIGUOUS_RESEND: whether an ambiguous send is ever resent (default never). */
  whatsappAmbiguousResend?: AmbiguousResendRule;
}

/**
 * A hand-over: the provider's id (answered), or ambiguous (the answer was lost: resolved by the status webhook,
 * resolveAmbiguousSend after resendAfterMs).
 */
export type HandOver =
  { providerMessageId: string | null; ambiguous?: false } | { ambiguous: true; resendAfterMs: number };

type MessageRow = NonNullable<Awaited<ReturnType<Database['whatsAppMessage']['findUnique']>>>;

/*
 * The activities of one outbound WhatsApp message (workflows/whatsapp/whatsapp-message.ts). The message is
 * recorded, checked and held for by whoever sends it (the API, a campaign's lead) before its workflow
 * starts; these hand it to the provider at most once and settle a refusal. Statuses after that arrive
 * as the provider's webhooks (api/whatsapp/whatsapp-webhook.ts), which post or void the hold.
 */

/** The answer of a send whose answer was lost: resolved after WHATSAPP_RESEND_AFTER_SECONDS (default 900 s). */
const ambiguousHandOver = ({ whatsappResendAfterMs = 900_000 }: WhatsAppMessageDependencies): HandOver => ({
  ambiguous: true,
  resendAfterMs: whatsappResendAfterMs,
});

/** Voids a message's hold (idempotent: a hold settled meanwhile is left as it is). */
async function voidHold(db: Database, messageId: string, workspaceId: string) {
  try {
    await settleWhatsAppMessageHold(
      prismaCreditStore(db),
      { workspaceId, messageId, delivered: false },
      WHATSAPP_BILLING_ACTOR,
    );
  } catch (error) {
    if (!(error instanceof HoldAlreadySettledError)) throw error;
  }
}

/** The send request of a message, as the provider is given it. */
async function requestOf(db: Database, message: MessageRow): Promise<WhatsAppSendRequest> {
  const [sender, conversation, template] = await Promise.all([
    db.whatsAppSender.findUniqueOrThrow({ where: { id: message.senderId } }),
    db.whatsAppConversation.findUniqueOrThrow({ where: { id: message.conversationId } }),
    message.templateId ? db.whatsAppTemplate.findUnique({ where: { id: message.templateId } }) : null,
  ]);
  return {
    phoneNumberId: sender.phoneNumberId,
    to: conversation.contactE164,
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
}

/**
 * Tries the message's send number `attempt` (1, or 2 for the one resend), once: the attempt is claimed in the
 * database before the request goes, so a retried activity (a worker killed mid-request) never sends it again but
 * finds it ambiguous. A throughput refusal (130429, 131056) was not taken: the claim is given back, the sender
 * backs off (WhatsAppSender.backoffUntil, shared by every worker) and the activity is retried after it. A refusal
 * fails for good; an unreachable provider (nothing sent) is retried.
 */
async function tryOnce(
  dependencies: WhatsAppMessageDependencies,
  message: MessageRow,
  attempt: 1 | 2,
): Promise<HandOver> {
  const { db, whatsappProvider } = dependencies;
  if (!whatsappProvider) throw new Error('this worker has no WhatsApp provider');
  const sender = await db.whatsAppSender.findUniqueOrThrow({
    where: { id: message.senderId },
    select: { backoffUntil: true },
  });
  const waitMs = (sender.backoffUntil?.getTime() ?? 0) - Date.now();
  if (waitMs > 0) throw backoffFailure('the sender is backing off', waitMs);
  // Everything but the request itself is done before the claim: a worker killed after its claim and before its
  // request left leaves a send that is answered unknown, never resent, so that gap is kept to the claim's commit.
  const send = await whatsappProvider.prepareSend(await requestOf(db, message));
  const claimed = await db.whatsAppMessage.updateMany({
    where: { id: message.id, sendAttempts: attempt - 1, providerMessageId: null },
    data: { sendAttempts: attempt },
  });
  if (claimed.count === 0) {
    // Tried before by an activity that never came back: its answer is lost.
    return answerLost(dependencies, message.id, attempt);
  }
  const giveBack = () =>
    db.whatsAppMessage.updateMany({
      where: { id: message.id, sendAttempts: attempt, providerMessageId: null },
      data: { sendAttempts: attempt - 1 },
    });
  try {
    const { messageId: providerMessageId } = await send();
    await db.whatsAppMessage.updateMany({
      where: { id: message.id },
      data: {
        providerMessageId,
        handOver: attempt === 1 ? 'answered' : 'resent',
      },
    });
    return { providerMessageId };
  } catch (error) {
    if (error instanceof AmbiguousSendError) return answerLost(dependencies, message.id, attempt);
    if (error instanceof WhatsAppProviderError && BACKOFF_MS[error.code] !== undefined) {
      await giveBack();
      const delayMs = BACKOFF_MS[error.code]!;
      await backOffSender(db.sql, message.senderId, delayMs);
      throw backoffFailure(error.message, delayMs);
    }
    if (error instanceof WhatsAppProviderError && isRefusal(error))
      throw ApplicationFailure.create({
        type: ErrorCode.provider_error,
        message: error.message,
        details: [{ code: error.code, title: error.title, httpStatus: error.httpStatus }],
        nonRetryable: true,
      });
    // Not reached (refused connection, unknown host): nothing was sent; the activity's retry tries again.
    await giveBack();
    throw error;
  }
}

/**
 * A send of `attempt` whose answer is lost: ambiguous (resolved later), unless its status already came. Meta's `sent`
 * webhook often overtakes a lost answer (a timeout is 10 s, `sent` takes about one): it recorded the provider's id by
 * its callback data, so the send is handed over, recorded as such, and nothing waits for a status that came.
 */
async function answerLost(
  dependencies: WhatsAppMessageDependencies,
  messageId: string,
  attempt: 1 | 2,
): Promise<HandOver> {
  const { db } = dependencies;

  const marked = await db.whatsAppMessage.updateMany({
    where: { id: messageId, providerMessageId: null },
    data: { handOver: 'ambiguous', ambiguousAt: new Date() },
  });
  if (marked.count > 0) return ambiguousHandOver(dependencies);
  await db.whatsAppMessage.updateMany({
    where: { id: messageId, OR: [{ handOver: null }, { handOver: 'ambiguous' }] },
    data: { handOver: attempt === 1 ? 'answered' : 'resent' },
  });
  const message = await db.whatsAppMessage.findUniqueOrThrow({
    where: { id: messageId },
    select: { providerMessageId: true },
  });
  return { providerMessageId: message.providerMessageId };
}

/**
 * Hands the message to the provider, once (docs/features/whatsapp/sending.md#no-message-twice), with its id as the
 * callback data the provider echoes in its status webhooks, and records the provider's id. A message already
 * handed over, failed, or gone is left as it is; one whose answer was lost is answered ambiguous.
 */
export async function sendWhatsAppMessage(
  dependencies: WhatsAppMessageDependencies,
  { messageId }: { messageId: string },
): Promise<HandOver> {
  const { db } = dependencies;

  const message = await db.whatsAppMessage.findUnique({ where: { id: messageId } });
  if (message?.providerMessageId && message.handOver === null)
    // Sent by an activity that never came back, and its status came since: handed over.
    await db.whatsAppMessage.updateMany({
      where: { id: messageId, handOver: null },
      data: { handOver: 'answered' },
    });
  if (!message || message.status === 'failed' || message.providerMessageId)
    return { providerMessageId: message?.providerMessageId ?? null };
  if (message.handOver === 'ambiguous' || message.handOver === 'unknown') return ambiguousHandOver(dependencies);
  return tryOnce(dependencies, message, 1);
}

/**
 * An ambiguous send, resendAfterMs later: resolved when a status came (the webhook recorded the provider's id
 * from its biz_opaque_callback_data: sent); else marked unknown (never sent twice). Only under the opt-in rule
 * (WHATSAPP_AMBIGUOUS_RESEND=after-later-status) is it first resent once when a later message of the same number
 * has had a status: statuses are not ordered across messages, so that does not prove Meta never took this one,
 * and the resend may be a duplicate (docs/features/whatsapp/sending.md#no-message-twice states the bound). Its hold stays pending: a status that comes later settles it as for any message (delivered: charged
 * once), and the hold sweep voids it when the platform's 30 days are over (settleWhatsAppMessageHoldOf).
 */
export async function resolveAmbiguousSend(
  dependencies: WhatsAppMessageDependencies,
  { messageId }: { messageId: string },
): Promise<'sent' | 'resent' | 'unknown' | 'failed'> {
  const { db, whatsappAmbiguousResend = 'never' } = dependencies;

  const message = await db.whatsAppMessage.findUnique({ where: { id: messageId } });
  if (!message) throw rowNotFound(`WhatsApp message ${messageId}`);
  if (message.status === 'failed') return 'failed';
  if (message.providerMessageId || message.status !== 'accepted') {
    await db.whatsAppMessage.updateMany({
      where: { id: messageId, OR: [{ handOver: 'ambiguous' }, { handOver: null }] },
      data: { handOver: 'answered' },
    });
    return 'sent';
  }
  if (message.handOver === 'unknown') return 'unknown';
  const since = message.ambiguousAt ?? message.createdAt;
  const proof =
    whatsappAmbiguousResend === 'after-later-status' &&
    (await db.whatsAppMessage.findFirst({
      where: {
        senderId: message.senderId,
        direction: 'outbound',
        id: { not: message.id },
        createdAt: { gt: since },
        OR: [{ sentAt: { not: null } }, { deliveredAt: { not: null } }, { failedAt: { not: null } }],
        providerMessageId: { not: null },
      },
      select: { id: true },
    }));
  if (proof && message.sendAttempts < 2) {
    const resent = await tryOnce(dependencies, message, 2);
    if (!resent.ambiguous) return 'resent';
  }
  await db.whatsAppMessage.updateMany({
    where: { id: messageId, providerMessageId: null, status: 'accepted' },
    data: { handOver: 'unknown' },
  });
  const settled = await db.whatsAppMessage.findUnique({ where: { id: messageId } });
  if (!settled) throw rowNotFound(`WhatsApp message ${messageId}`);
  return settled.handOver === 'unknown' ? 'unknown' : 'sent';
}

/** Marks a message the provider refused failed, with its code and title, unless a webhook moved it on meanwhile. */
export async function failWhatsAppMessage(
  { db }: Pick<WhatsAppMessageDependencies, 'db'>,
  failure: { messageId: string; errorCode: number | null; errorTitle: string },
) {
  await db.whatsAppMessage.updateMany({
    where: { id: failure.messageId, status: 'accepted' },
    data: {
      status: 'failed',
      errorCode: failure.errorCode,
      errorTitle: failure.errorTitle.slice(0, 500),
      failedAt: new Date(),
    },
  });
}

/** Voids the hold of a failed message (idempotent; a hold settled by a webhook meanwhile is left as it is). */
export async function voidWhatsAppMessageHold(
  { db }: Pick<WhatsAppMessageDependencies, 'db'>,
  { messageId }: { messageId: string },
) {
  const message = await db.whatsAppMessage.findUnique({
    where: { id: messageId },
    select: { workspaceId: true, status: true },
  });
  if (!message || message.status !== 'failed') return;
  await voidHold(db, messageId, message.workspaceId);
}

export type WhatsAppMessageActivities = BoundActivities<{
  sendWhatsAppMessage: typeof sendWhatsAppMessage;
  resolveAmbiguousSend: typeof resolveAmbiguousSend;
  failWhatsAppMessage: typeof failWhatsAppMessage;
  voidWhatsAppMessageHold: typeof voidWhatsAppMessageHold;
}>;
