import { Context } from '@temporalio/activity';
import { leadWorkflowKind } from '../../lib/campaigns/lead-workflow-kind';
import {
  countFreshContactLeads,
  countUnenrolledContacts,
  insertContactLeads,
  lockEnrollingCampaign,
  nextUnenrolledContacts,
} from '../../lib/dial-ladder/dial-ladder-store';
import { startLeadWorkflow, type StoredLead } from '../../lib/temporal/start-lead-workflow';
import { leadWorkflowId } from '../../lib/temporal/workflow-ids';
import type { ActivityDependencies } from '../dependencies';

export interface EnrollmentStep {
  /** done: every contact is a lead, or the campaign stopped. waiting: the campaign is not running. */
  state: 'enrolled' | 'waiting' | 'done';
  enrolled: number;
  remaining: number;
}

type EnrollmentDependencies = Pick<ActivityDependencies, 'db' | 'temporal'>;

/** Leads enrolled but not dialed yet, per call the campaign may have in flight: enough to keep its lines busy. */
const FRESH_LEADS_PER_LINE = 2;
const MAX_BATCH = 1_000;
const START_CONCURRENCY = 50;

/** A calling-list contact's lead key: a retried enrollment finds the lead it made instead of making another. */
export function contactLeadKey(contactId: string): string {
  return `contact:${contactId}`;
}

/**
 * Turns the next contacts of a running campaign's calling list into leads, as many as keep its
 * lines busy (FRESH_LEADS_PER_LINE × maxConcurrentCalls leads not dialed yet), in one transaction
 * that marks them enrolled, then starts their workflows. A lead's key is contactLeadKey(contactId),
 * so a retried activity finds the leads it made; their workflows start idempotently.
 */
export async function enrollNextContacts(
  dependencies: EnrollmentDependencies,
  { campaignId }: { campaignId: string },
): Promise<EnrollmentStep> {
  const { db } = dependencies;
  const { leads, step } = await db.$transaction(async (tx) => {
    const campaign = await lockEnrollingCampaign(tx, campaignId);
    const remaining = await countUnenrolledContacts(tx, campaignId);
    // JOURNEY campaigns enroll leads pushed through the API; a calling list is dialed by CLASSIC ones.
    if (!campaign || campaign.kind === 'JOURNEY' || campaign.status === 'STOPPED' || remaining === 0)
      return { leads: [], step: { state: 'done', enrolled: 0, remaining } as EnrollmentStep };
    if (campaign.status !== 'RUNNING')
      return { leads: [], step: { state: 'waiting', enrolled: 0, remaining } as EnrollmentStep };
    const fresh = await countFreshContactLeads(tx, campaignId);
    const room = Math.min(MAX_BATCH, Math.max(0, campaign.maxConcurrentCalls * FRESH_LEADS_PER_LINE - fresh));
    if (room === 0) return { leads: [], step: { state: 'enrolled', enrolled: 0, remaining } as EnrollmentStep };
    // The contacts are taken first: each lead's workflow id is made in TypeScript (lib/temporal/workflow-ids.ts)
    // from its key and handed to the INSERT, the same id a push of that key to this campaign gets.
    const contactIds = await nextUnenrolledContacts(tx, campaignId, room);
    const keys = contactIds.map(contactLeadKey);
    const workflowIds = keys.map((key) => leadWorkflowId(campaignId, key));
    const inserted = await insertContactLeads(tx, {
      campaignId,
      workspaceId: campaign.workspaceId,
      contactIds,
      keys,
      workflowIds,
    });
    const leads: StoredLead[] = inserted.map((row) => ({
      ...row,
      campaignId,
      workspaceId: campaign.workspaceId,
      kind: leadWorkflowKind(campaign),
    }));
    return {
      leads,
      step: { state: 'enrolled', enrolled: leads.length, remaining: remaining - leads.length } as EnrollmentStep,
    };
  });
  await startAll(dependencies, leads);
  // Leads of an earlier attempt of this activity whose start was cut short: start them too.
  const unstarted = await db.lead.findMany({
    where: { campaignId, contactId: { not: null }, workflowStartedAt: null },
    select: { id: true, workflowId: true, workspaceId: true, campaign: { select: { kind: true, channel: true } } },
    take: MAX_BATCH,
  });
  await startAll(
    dependencies,
    unstarted.map((lead) => ({
      id: lead.id,
      workflowId: lead.workflowId,
      workspaceId: lead.workspaceId,
      campaignId,
      kind: leadWorkflowKind(lead.campaign),
    })),
  );
  return step;
}

async function startAll({ db, temporal }: EnrollmentDependencies, leads: StoredLead[]) {
  const taskQueue = Context.current().info.taskQueue;
  const started: string[] = [];
  for (let offset = 0; offset < leads.length; offset += START_CONCURRENCY) {
    const batch = leads.slice(offset, offset + START_CONCURRENCY);
    const results = await Promise.all(batch.map((lead) => startLeadWorkflow(temporal, taskQueue, lead)));
    started.push(...batch.filter((_, index) => results[index]).map((lead) => lead.id));
    Context.current().heartbeat(offset);
  }
  if (started.length)
    await db.lead.updateMany({ where: { id: { in: started } }, data: { workflowStartedAt: new Date() } });
}
