/*
 * What leadMessageWorkflow (workflows/whatsapp/lead-message.ts), a WHATSAPP campaign's lead, is started with,
 * what it answers and what its leadMessageState query tells: types only, so that whoever starts or queries it
 * (lib/temporal/) loads no workflow code.
 */

export interface LeadMessageInput {
  leadId: string;
}

/** Why a lead's message was not sent: a refusal known before the provider is asked. */
export type LeadMessageRefusal =
  'do_not_call' | 'insufficient_credits' | 'sender_disconnected' | 'template_not_approved' | 'variable_missing';

/** How a WHATSAPP lead ended: its message's last status, or why none was sent. */
export type LeadMessageOutcome =
  | 'delivered'
  | 'read'
  | 'failed'
  | 'undelivered'
  /** The send's answer was lost and nothing resolved it: never sent twice (docs/features/whatsapp/sending.md#no-message-twice). */
  | 'unknown'
  | 'campaign_stopped'
  | 'no_calling_window'
  | LeadMessageRefusal;

export interface LeadMessageResult {
  status: 'completed' | 'failed' | 'cancelled';
  outcome: LeadMessageOutcome;
  messageId: string | null;
}

export interface LeadMessageState {
  phase:
    | 'preparing'
    | 'waiting_for_campaign'
    | 'waiting_for_window'
    | 'waiting_for_sender'
    | 'sending'
    | 'awaiting_delivery'
    | 'finished';
  messageId: string | null;
  /** The message's last status as its webhooks told. */
  messageStatus: string | null;
  nextWakeAt: string | null;
}
