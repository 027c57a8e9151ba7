import { ApplicationFailure } from '@temporalio/common';
import { DEFAULT_CALLING_WINDOW, callingWindowSchema, type CallingWindow } from '../../lib/dial-ladder/calling-window';
import type { Database } from '../../lib/database';
import { ErrorCode } from '../../lib/error-codes';
import { recipientLimitWait, takeSenderSlot } from '../../lib/whatsapp/whatsapp-store';

import { fillTemplateVariables, whatsAppCampaignSettingsSchema } from '../../lib/whatsapp/campaign-settings';
import { messageIdByKey, recordTemplateMessageOnce } from '../../lib/whatsapp/outbound-message';
import type { SimulatorsSetting } from '../../lib/simulators';
import type { LeadMessageRefusal } from '../../lib/whatsapp/lead-message-state';
import { timeZonesOf } from '../../lib/dial-ladder/phone-time-zones';

export interface LeadMessagePlan {
  senderId: string;
  window: CallingWindow;
  timeZones: string[];
}

/** The message of a WHATSAPP campaign's lead is found again by this key: one message per lead, ever. */
export const leadMessageKey = (leadId: string) => `lead:${leadId}`;

const notConfigured = (campaignId: string) =>
  ApplicationFailure.create({
    type: ErrorCode.whatsapp_campaign_not_configured,
    message: `campaign ${campaignId} has no WhatsApp messaging (PUT /whatsapp/campaigns/{id})`,
    nonRetryable: true,
  });

/*
 * The activities of a WHATSAPP campaign's lead (workflows/whatsapp/lead-message.ts): its plan, its pace on the
 * sender, and its one message, recorded and held for. Handing the message to the provider and settling a
 * refusal are the message's activities (activities/whatsapp/whatsapp-messages.ts).
 */

/** The sender and sending window as they are when the lead starts, and the lead's time zones. */
export async function prepareMessageLead(
  { db }: { db: Database },
  { leadId }: { leadId: string },
): Promise<LeadMessagePlan> {
  const lead = await db.lead.findUniqueOrThrow({
    where: { id: leadId },
    select: { phone: true, campaignId: true },
  });
  const stored = await db.whatsAppCampaignSettings.findUnique({ where: { campaignId: lead.campaignId } });
  if (!stored) throw notConfigured(lead.campaignId);
  return {
    senderId: stored.senderId,
    window: callingWindowSchema.safeParse(stored.sendingWindow).data ?? DEFAULT_CALLING_WINDOW,
    timeZones: timeZonesOf(lead.phone),
  };
}

/**
 * The lead's turn on its sender, paced as the platform requires (docs/features/whatsapp/campaigns.md,
 * pacing): one message every 1/messagesPerSecond s per sender (a slot taken by advancing the sender's nextSendAt in
 * one statement, so every worker shares one schedule), and no more distinct recipients of business-initiated
 * messages in 24 hours than the sender's dailyRecipientLimit: past it, the wait lasts until the oldest of them
 * leaves the 24 hours; and a number backing off after Meta's 130429/131056 (backoffUntil) books after it. Answers
 * how long to wait before sending (0: now).
 */
export async function reserveSenderSlot(
  { db }: { db: Database },
  { senderId, to }: { senderId: string; to: string },
): Promise<{ waitMs: number }> {
  const slotWaitMs = await takeSenderSlot(db.sql, senderId);
  const limitWaitMs = await recipientLimitWait(db.sql, senderId, to);
  return { waitMs: Math.max(Math.ceil(slotWaitMs), Math.ceil(limitWaitMs ?? 0)) };
}

/**
 * Records the lead's one message with its price held (as POST /whatsapp/messages records one), under
 * the lead's key: a retry, or a lead run again, finds it instead of sending twice. Refused before the
 * provider is asked: a number on the Do-Not-Call list, a disconnected sender, a template no longer
 * APPROVED, a variable the lead cannot fill, a balance short of the price.
 */
export async function recordLeadMessage(
  { db, simulators = 'billed' }: { db: Database; simulators?: SimulatorsSetting },
  {
    leadId,
  }: {
    leadId: string;
  },
): Promise<{ messageId: string } | { refused: LeadMessageRefusal }> {
  const lead = await db.lead.findUniqueOrThrow({
    where: { id: leadId },
    select: { id: true, workspaceId: true, campaignId: true, phone: true, name: true, fields: true },
  });
  const idempotencyKey = leadMessageKey(leadId);
  const earlier = await messageIdByKey(db, lead.workspaceId, idempotencyKey);
  if (earlier) return { messageId: earlier };
  const stored = await db.whatsAppCampaignSettings.findUnique({ where: { campaignId: lead.campaignId } });
  if (!stored) throw notConfigured(lead.campaignId);
  const settings = whatsAppCampaignSettingsSchema.parse({
    senderId: stored.senderId,
    templateId: stored.templateId,
    variables: stored.variables,
    sendingWindow: stored.sendingWindow,
  });
  const [listed, sender, template] = await Promise.all([
    db.doNotCall.findUnique({ where: { workspaceId_phone: { workspaceId: lead.workspaceId, phone: lead.phone } } }),
    db.whatsAppSender.findUnique({ where: { id: settings.senderId } }),
    db.whatsAppTemplate.findUnique({ where: { id: settings.templateId } }),
  ]);
  if (listed) return { refused: 'do_not_call' };
  if (!sender || sender.status !== 'CONNECTED') return { refused: 'sender_disconnected' };
  if (!template || template.status !== 'APPROVED') return { refused: 'template_not_approved' };
  const filled = fillTemplateVariables(settings.variables, template.variableCount, {
    name: lead.name,
    phone: lead.phone,
    fields: (lead.fields ?? {}) as Record<string, unknown>,
  });
  if ('missing' in filled) return { refused: 'variable_missing' };
  return recordTemplateMessageOnce(
    db,
    {
      workspaceId: lead.workspaceId,
      senderId: sender.id,
      to: lead.phone,
      template,
      parameters: filled.values,
      idempotencyKey,
      campaignId: lead.campaignId,
      leadId: lead.id,
    },
    { type: 'system', id: 'leadMessageWorkflow' },
    simulators,
  );
}

/** The lead's phone (E.164), which its pace on the sender counts as a recipient. */
export async function leadPhone({ db }: { db: Database }, { leadId }: { leadId: string }): Promise<{ phone: string }> {
  return db.lead.findUniqueOrThrow({ where: { id: leadId }, select: { phone: true } });
}

/** The message's status as its webhooks left it. */
export async function leadMessageStatus(
  { db }: { db: Database },
  { messageId }: { messageId: string },
): Promise<string | null> {
  const message = await db.whatsAppMessage.findUnique({ where: { id: messageId }, select: { status: true } });
  return message?.status ?? null;
}
