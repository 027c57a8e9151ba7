import { condition, patched, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { PATCHES } from '../../lib/temporal/patches';
import { refusalOf } from '../../lib/temporal/refusal';
import { leadMessageSteps, providerForADay } from '../../lib/temporal/retry-policies';
import { leadMessageStateQuery, whatsAppMessageStatusSignal } from '../../lib/temporal/messages';
import { receiveCampaignChanges } from '../campaigns/campaign-hold';
import type {
  LeadMessageInput,
  LeadMessageOutcome,
  LeadMessageResult,
  LeadMessageState,
} from '../../lib/whatsapp/lead-message-state';

/** Bookkeeping in the workflow task (as the dial ladder's): each idempotent, recorded as markers. */
const local = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: leadMessageSteps });
/**
 * Handing the message to the provider: one short HTTP request, idempotent by the message's key, so it
 * runs as a local activity in the workflow task (as the dial ladder's dial does): retried while the
 * provider is down or throttling (about a day), never on a refusal.
 */
const { sendWhatsAppMessage } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: providerForADay,
});

/** A lead held by its campaign looks again by itself this often, should a signal have been missed. */
const CAMPAIGN_RECHECK_MS = 5 * 60_000;
/**
 * How long a lead waits for its message to be delivered (or fail) before it ends as undelivered: the
 * platform keeps trying longer (its hold is settled by the webhook or the sweep, whenever), but a
 * campaign's result does not wait for a phone that stays off for a day.
 */
export const DELIVERY_WAIT_MS = 24 * 60 * 60_000;

const DECIDED = new Set(['delivered', 'read', 'failed']);

/**
 * One lead of a WHATSAPP campaign (docs/features/whatsapp/campaigns.md): when the campaign runs and the
 * sending window is open in the lead's local time, the lead takes its turn on the sender (paced), its one
 * template message is recorded with its price held, then handed to the provider; the lead ends when the
 * message is delivered (completed), fails, or is not delivered within DELIVERY_WAIT_MS. Paused: it holds
 * before sending and goes on where it stood; stopped: it ends cancelled, unless its message is already out.
 */
export async function leadMessageWorkflow({ leadId }: LeadMessageInput): Promise<LeadMessageResult> {
  const state: LeadMessageState = { phase: 'preparing', messageId: null, messageStatus: null, nextWakeAt: null };
  setHandler(leadMessageStateQuery, () => state);
  const campaign = receiveCampaignChanges(state, () => local.campaignStatusOfLead({ leadId }));
  setHandler(whatsAppMessageStatusSignal, ({ messageId, status }) => {
    if (messageId === state.messageId) state.messageStatus = status;
  });

  const finish = async (
    status: LeadMessageResult['status'],
    outcome: LeadMessageOutcome,
  ): Promise<LeadMessageResult> => {
    await local.finishLead({ leadId, status });
    await local.enqueueLeadFinished({ leadId, outcome, attempts: state.messageId ? 1 : 0 });
    Object.assign(state, { phase: 'finished', nextWakeAt: null });
    return { status, outcome, messageId: state.messageId };
  };

  const plan = await local.prepareMessageLead({ leadId });
  for (;;) {
    const campaignStatus = await local.campaignStatusOfLead({ leadId });
    if (campaignStatus === 'STOPPED') return finish('cancelled', 'campaign_stopped');
    if (campaignStatus !== 'RUNNING') {
      campaign.forgetChanges();
      await campaign.hold('waiting_for_campaign', CAMPAIGN_RECHECK_MS);
      continue;
    }
    const slot = await local.nextCallingSlot({ window: plan.window, timeZones: plan.timeZones });
    if (slot === null) return finish('failed', 'no_calling_window');
    if (slot.waitMs > 0) {
      if (!(await campaign.waitUnlessStopped('waiting_for_window', slot.waitMs)))
        return finish('cancelled', 'campaign_stopped');
      continue;
    }
    break;
  }
  const { phone } = await local.leadPhone({ leadId });
  const turn = await local.reserveSenderSlot({ senderId: plan.senderId, to: phone });
  if (turn.waitMs > 0 && !(await campaign.waitUnlessStopped('waiting_for_sender', turn.waitMs)))
    return finish('cancelled', 'campaign_stopped');

  state.phase = 'sending';
  const recorded = await local.recordLeadMessage({ leadId });
  if ('refused' in recorded)
    return finish(recorded.refused === 'do_not_call' ? 'cancelled' : 'failed', recorded.refused);
  state.messageId = recorded.messageId;
  let handOver;
  try {
    handOver = await sendWhatsAppMessage({ messageId: recorded.messageId });
  } catch (error) {
    const detail = refusalOf(error)?.detail as { code?: number; title?: string } | undefined;
    await local.failWhatsAppMessage({
      messageId: recorded.messageId,
      errorCode: detail?.code ?? null,
      errorTitle: detail?.title ?? 'the provider could not be reached; the message was given up',
    });
    await local.voidWhatsAppMessageHold({ messageId: recorded.messageId });
    return finish('failed', 'failed');
  }
  state.phase = 'awaiting_delivery';
  if (handOver.ambiguous && patched(PATCHES.leadMessageHandOverOnce.id)) {
    // The answer was lost: no blind retry (docs/features/whatsapp/sending.md#no-message-twice). Its status resolves it.
    await condition(() => DECIDED.has(state.messageStatus ?? ''), handOver.resendAfterMs);
    if (!DECIDED.has(state.messageStatus ?? '')) {
      const outcome = await local.resolveAmbiguousSend({ messageId: recorded.messageId });
      if (outcome === 'unknown') return finish('failed', 'unknown');
      if (outcome === 'failed') return finish('failed', 'failed');
    }
  }
  state.messageStatus ??= await local.leadMessageStatus({ messageId: recorded.messageId });
  if (!DECIDED.has(state.messageStatus ?? '')) {
    await condition(() => DECIDED.has(state.messageStatus ?? ''), DELIVERY_WAIT_MS);
    if (!DECIDED.has(state.messageStatus ?? ''))
      state.messageStatus = await local.leadMessageStatus({ messageId: recorded.messageId });
  }
  const last = state.messageStatus;
  if (last === 'delivered' || last === 'read') return finish('completed', last);
  if (last === 'failed') return finish('failed', 'failed');
  return finish('failed', 'undelivered');
}
