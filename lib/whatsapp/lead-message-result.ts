import type { WhatsAppMessage } from '../../generated/prisma/client';
import type { Database } from '../database';
import { simulatedSenderIds } from './senders';

/**
 * A WHATSAPP campaign's lead in its result (GET /v1/results, GET /campaigns/{id}/leads) and in its
 * lead.finished event (docs/features/whatsapp/campaigns.md#whatsapp-campaigns-results-result-webhooks-and-kpis, "Result
 * webhooks"): its one template message where a voice lead has calls.
 */
export const LEAD_MESSAGE_FIELDS = {
  id: true,
  status: true,
  providerMessageId: true,
  errorCode: true,
  errorTitle: true,
  createdAt: true,
  sentAt: true,
  deliveredAt: true,
  readAt: true,
  failedAt: true,
} as const;

const LEAD_MESSAGE_COLUMNS = { ...LEAD_MESSAGE_FIELDS, leadId: true, senderId: true } as const;

/** `simulated`: its sender is carried by the simulated provider (docs/configuration.md#simulators). */
export type LeadMessageRow = Pick<WhatsAppMessage, keyof typeof LEAD_MESSAGE_COLUMNS> & { simulated: boolean };

export interface LeadMessageView {
  id: string;
  status: 'accepted' | 'sent' | 'delivered' | 'read' | 'failed';
  providerMessageId: string | null;
  errorCode: number | null;
  errorTitle: string | null;
  createdAt: string;
  sentAt: string | null;
  deliveredAt: string | null;
  readAt: string | null;
  failedAt: string | null;
  simulated: boolean;
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

export function leadMessageView(message: LeadMessageRow): LeadMessageView {
  return {
    id: message.id,
    // A lead's message is outbound: never received.
    status: message.status as LeadMessageView['status'],
    providerMessageId: message.providerMessageId,
    errorCode: message.errorCode,
    errorTitle: message.errorTitle,
    createdAt: message.createdAt.toISOString(),
    sentAt: iso(message.sentAt),
    deliveredAt: iso(message.deliveredAt),
    readAt: iso(message.readAt),
    failedAt: iso(message.failedAt),
    simulated: message.simulated,
  };
}

/**
 * How a lead's message ended, in the lead workflow's words (workflows/whatsapp/lead-message.ts): read, delivered,
 * failed; a message still accepted or sent is undelivered once its lead has finished (the lead stopped
 * waiting for it) and has no outcome yet while the lead waits. It follows the message's status as it is
 * now: a message delivered after its lead stopped waiting reads delivered.
 */
export function leadMessageOutcome(
  message: Pick<LeadMessageRow, 'status'>,
  leadStatus: string,
): 'read' | 'delivered' | 'failed' | 'undelivered' | null {
  if (message.status === 'read' || message.status === 'delivered' || message.status === 'failed') return message.status;
  return leadStatus === 'queued' || leadStatus === 'dialing' ? null : 'undelivered';
}

/** The one outbound message of each of these leads (one per lead, ever: its key is the lead's), by lead id. */
export async function leadMessages(db: Database, leadIds: string[]): Promise<Map<string, LeadMessageRow>> {
  if (!leadIds.length) return new Map();
  const rows = await db.whatsAppMessage.findMany({
    where: { leadId: { in: leadIds }, direction: 'outbound' },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: LEAD_MESSAGE_COLUMNS,
  });
  const simulated = await simulatedSenderIds(
    db,
    rows.map((row) => row.senderId),
  );
  // Oldest last, so the first message recorded for a lead wins.
  return new Map(rows.map((row) => [row.leadId!, { ...row, simulated: simulated.has(row.senderId) }]));
}
