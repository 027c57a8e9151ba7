import { ApplicationFailure } from '@temporalio/common';
import { nextAllowedInstant, type CallingWindow } from '../../lib/dial-ladder/calling-window';
import { ErrorCode } from '../../lib/error-codes';
import { finishLeadOnce, type LeadFinalStatus } from '../../lib/leads/lead-final-status';
import type { ActivityDependencies } from '../dependencies';

/** A lead that is not there: no retry brings it back. */
export function leadNotFound(leadId: string) {
  return ApplicationFailure.create({
    type: ErrorCode.lead_not_found,
    message: `lead ${leadId} not found`,
    nonRetryable: true,
  });
}

/*
 * What every lead's workflow asks of its lead, whatever it runs: the ladders (workflows/dial-ladder/), the WHATSAPP
 * lead (workflows/whatsapp/lead-message.ts) and a journey run (workflows/journeys/journey-run.ts). Registered by
 * name: the names are in committed histories, never rename one.
 */

/**
 * How long to wait, from now, for the calling window to open in every one of the lead's time zones (the sending
 * window of a WHATSAPP lead); null when it never opens in all of them at once. No I/O, no dependencies: the dial
 * ladder's attemptCall asks it too (activities/dial-ladder/calls.ts).
 */
export async function nextCallingSlot(
  _dependencies: unknown,
  { window, timeZones }: { window: CallingWindow; timeZones: string[] },
): Promise<{ waitMs: number; at: string } | null> {
  const now = new Date();
  const next = nextAllowedInstant(now, window, timeZones);
  return next && { waitMs: Math.max(next.getTime() - now.getTime(), 0), at: next.toISOString() };
}

/** The lead's final status, unless it has one already (lib/leads/lead-final-status.ts). */
export async function finishLead(
  { db }: Pick<ActivityDependencies, 'db'>,
  { leadId, status }: { leadId: string; status: LeadFinalStatus },
): Promise<void> {
  if (!(await finishLeadOnce(db.sql, leadId, status))) throw leadNotFound(leadId);
}

/** The lead's campaign's status now (a lead waiting asks it when campaignChanged wakes it). */
export async function campaignStatusOfLead(
  { db }: Pick<ActivityDependencies, 'db'>,
  { leadId }: { leadId: string },
): Promise<string> {
  const lead = await db.lead.findUnique({
    where: { id: leadId },
    select: { campaign: { select: { status: true } } },
  });
  if (!lead) throw leadNotFound(leadId);
  return lead.campaign.status;
}
