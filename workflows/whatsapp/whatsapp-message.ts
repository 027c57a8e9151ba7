import { CancellationScope, deprecatePatch, proxyActivities, sleep } from '@temporalio/workflow';
import type { WhatsAppMessageActivities } from '../../activities/whatsapp/whatsapp-messages';
import { PATCHES } from '../../lib/temporal/patches';
import { refusalOf } from '../../lib/temporal/refusal';
import { providerForADay, untilDatabaseAnswers } from '../../lib/temporal/retry-policies';
import type { WhatsAppMessageInput, WhatsAppMessageResult } from '../../lib/whatsapp/whatsapp-message';

/**
 * Handing a message to the provider: a send takes a second at most; a provider that is down or throttling
 * (5xx, 429, unreachable) is retried for about a day (1 s doubling to 10 minutes), as a message accepted
 * is never dropped. A refusal (the provider's 4xx) is not retried.
 */
const { sendWhatsAppMessage } = proxyActivities<WhatsAppMessageActivities>({
  startToCloseTimeout: '30 seconds',
  retry: providerForADay,
});
const { failWhatsAppMessage, voidWhatsAppMessageHold, resolveAmbiguousSend } =
  proxyActivities<WhatsAppMessageActivities>({
    startToCloseTimeout: '30 seconds',
    retry: untilDatabaseAnswers,
  });

/** The platform's error code and title of a refusal (an ActivityFailure over the activity's ApplicationFailure). */
function platformErrorOf(error: unknown): { errorCode: number | null; errorTitle: string } {
  const refusal = refusalOf(error);
  if (refusal) {
    const detail = refusal.detail as { code?: number; title?: string } | undefined;
    return { errorCode: detail?.code ?? null, errorTitle: detail?.title ?? refusal.message };
  }
  return { errorCode: null, errorTitle: 'the provider could not be reached; the message was given up' };
}

/**
 * One outbound WhatsApp message (docs/features/whatsapp/sending.md): recorded, checked and held for by its sender
 * (the API or a campaign's lead) before this starts; handed to the provider at most once. What happens next (sent,
 * delivered, read, failed) arrives as the provider's webhooks, which settle the hold. A message the provider refuses,
 * or that cannot be handed over within its retries, is marked failed with the platform's code and its hold voided.
 */
export async function whatsAppMessageWorkflow({ messageId }: WhatsAppMessageInput): Promise<WhatsAppMessageResult> {
  try {
    const handOver = await sendWhatsAppMessage({ messageId });
    if (!handOver.ambiguous) return { status: 'handed_over', providerMessageId: handOver.providerMessageId };
    // The answer was lost: no blind retry. Its status webhook resolves it; else one resend at most, or unknown.
    // The patch is retired (docs/patch-register.md#retiring-a-patch); runs that recorded its marker replay on this call.
    deprecatePatch(PATCHES.whatsappHandOverOnce.id);
    await sleep(handOver.resendAfterMs);
    const outcome = await resolveAmbiguousSend({ messageId });
    if (outcome === 'unknown') return { status: 'unknown' };
    if (outcome === 'failed') return { status: 'failed', errorCode: null };
    return { status: 'handed_over', providerMessageId: null };
  } catch (error) {
    const refusal = platformErrorOf(error);
    await CancellationScope.nonCancellable(async () => {
      await failWhatsAppMessage({ messageId, ...refusal });
      await voidWhatsAppMessageHold({ messageId });
    });
    return { status: 'failed', errorCode: refusal.errorCode };
  }
}
