import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Database } from '../../lib/database';
import { ErrorCode } from '../../lib/error-codes';
import { startWhatsAppMessage } from '../../lib/temporal/whatsapp';
import { messageIdByKey, recordTemplateMessageOnce } from '../../lib/whatsapp/outbound-message';
import type { SimulatorsSetting } from '../../lib/simulators';
import {
  failWhatsAppMessage,
  sendWhatsAppMessage,
  voidWhatsAppMessageHold,
  type WhatsAppMessageDependencies,
} from './whatsapp-messages';

export interface JourneyWhatsAppInput {
  /** `<runId>:<nodeId>:<visit>`: one message per visit of the node, ever. */
  messageKey: string;
  runId: string;
  workspaceId: string;
  to: string | null;
  templateName: string;
  language: string;
  parameters: string[];
}

/** The whatsapp node's output (lib/journeys/definition.ts): the message, and whether the provider took it. */
export interface JourneyWhatsAppResult {
  messageId: string;
  status: 'sent' | 'failed';
}

const idempotencyKeyOf = (messageKey: string) => `journey:${messageKey}`;

async function senderOf(db: Database, workspaceId: string, campaignId: string | null) {
  const settings = campaignId
    ? await db.whatsAppCampaignSettings.findUnique({ where: { campaignId }, select: { senderId: true } })
    : null;
  return db.whatsAppSender.findFirst({
    where: { workspaceId, status: 'CONNECTED', ...(settings && { id: settings.senderId }) },
    orderBy: [{ connectedAt: 'asc' }, { id: 'asc' }],
  });
}

/** Records the node's message (or finds it, on a retry) with its hold; null when none can go. */
async function recordNodeMessage(
  db: Database,
  input: JourneyWhatsAppInput & { to: string },
  simulators: SimulatorsSetting,
): Promise<string | null> {
  const idempotencyKey = idempotencyKeyOf(input.messageKey);
  const earlier = await messageIdByKey(db, input.workspaceId, idempotencyKey);
  if (earlier) return earlier;
  const run = await db.journeyRun.findUnique({
    where: { id: input.runId },
    select: { campaignId: true, leadId: true },
  });
  const [sender, template, listed] = await Promise.all([
    senderOf(db, input.workspaceId, run?.campaignId ?? null),
    db.whatsAppTemplate.findFirst({
      where: {
        workspaceId: input.workspaceId,
        name: input.templateName,
        language: input.language,
        status: 'APPROVED',
      },
    }),
    db.doNotCall.findUnique({ where: { workspaceId_phone: { workspaceId: input.workspaceId, phone: input.to } } }),
  ]);
  if (!sender || !template || listed || input.parameters.length !== template.variableCount) return null;
  const recorded = await recordTemplateMessageOnce(
    db,
    {
      workspaceId: input.workspaceId,
      senderId: sender.id,
      to: input.to,
      template,
      parameters: input.parameters,
      idempotencyKey,
      campaignId: run?.campaignId ?? null,
      leadId: run?.leadId ?? null,
      journeyRunId: input.runId,
    },
    { type: 'system', id: 'journeyRunWorkflow' },
    simulators,
  );
  return 'messageId' in recorded ? recorded.messageId : null;
}

/**
 * A journey's whatsapp node on the WhatsApp channel (docs/features/whatsapp/campaigns.md): the same
 * provider, billing and statuses as POST /whatsapp/messages. The sender is the run's campaign's (PUT
 * /whatsapp/campaigns/{id}) or else the workspace's first connected one; the template is the workspace's of that name
 * and language. The message is recorded under the visit's key with its price held, then handed to the provider; its
 * statuses and billing follow by webhook. The node answers `failed` (and the run goes on) when no message could go: no
 * connected sender, no APPROVED template of that name, a number on the Do-Not-Call list, a balance short of the price,
 * or the provider's refusal. A send whose answer was lost is answered `sent` too, and handed to the message's own
 * workflow (workflows/whatsapp/whatsapp-message.ts), which applies the resend rule: resolved by its status, else
 * resent once, else marked unknown with its hold voided (docs/features/whatsapp/sending.md#no-message-twice).
 */
export async function sendJourneyWhatsApp(
  dependencies: WhatsAppMessageDependencies & { temporal: Client; simulators?: SimulatorsSetting },
  input: JourneyWhatsAppInput,
): Promise<JourneyWhatsAppResult> {
  const { db, temporal } = dependencies;
  if (!input.to)
    throw ApplicationFailure.create({
      type: ErrorCode.journey_call_without_lead,
      message: 'the run has no phone number to message',
      nonRetryable: true,
    });
  const messageId = await recordNodeMessage(db, { ...input, to: input.to }, dependencies.simulators ?? 'billed');
  if (!messageId) return { messageId: '', status: 'failed' };
  try {
    const handOver = await sendWhatsAppMessage(dependencies, { messageId });
    // The run does not wait: the message's workflow resolves it (started once; a retry finds it started).
    if (handOver.ambiguous)
      await startWhatsAppMessage(temporal, Context.current().info.taskQueue, {
        id: messageId,
        workspaceId: input.workspaceId,
      });
  } catch (error) {
    if (!(error instanceof ApplicationFailure && error.nonRetryable)) throw error;
    const detail = error.details?.[0] as { code?: number; title?: string } | undefined;
    await failWhatsAppMessage(dependencies, {
      messageId,
      errorCode: detail?.code ?? null,
      errorTitle: detail?.title ?? error.message,
    });
    await voidWhatsAppMessageHold(dependencies, { messageId });
  }
  const { status } = await db.whatsAppMessage.findUniqueOrThrow({
    where: { id: messageId },
    select: { status: true },
  });
  return { messageId, status: status === 'failed' ? 'failed' : 'sent' };
}
