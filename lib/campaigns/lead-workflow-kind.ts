/**
 * Which workflow a lead runs. CLASSIC: the dial ladder. JOURNEY: a run of the campaign's journey, whose run
 * id is the lead's id. WHATSAPP: a CLASSIC campaign of the WHATSAPP channel: its one template message
 * (leadMessageWorkflow).
 */
export type LeadWorkflowKind = 'CLASSIC' | 'JOURNEY' | 'WHATSAPP';

/** Which workflow a campaign's leads run: a journey's run, a WHATSAPP campaign's message, or the dial ladder. */
export function leadWorkflowKind(campaign: { kind: 'CLASSIC' | 'JOURNEY'; channel: string }): LeadWorkflowKind {
  if (campaign.kind === 'JOURNEY') return 'JOURNEY';
  return campaign.channel === 'WHATSAPP' ? 'WHATSAPP' : 'CLASSIC';
}

/** leadWorkflowKind in SQL, over a "Campaign" row aliased `c`, for the queries that read many leads at once. */
export const LEAD_WORKFLOW_KIND_SQL = `CASE WHEN c.kind = 'JOURNEY' THEN 'JOURNEY' WHEN c.channel = 'WHATSAPP' THEN 'WHATSAPP' ELSE 'CLASSIC' END`;
