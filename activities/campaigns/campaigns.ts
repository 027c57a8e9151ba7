import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { handOutFreeLines } from '../../lib/calls/call-lines';
import { handOverLines, wakeStoppedLeads } from '../../lib/temporal/line-queue';
import { prismaSql } from '../../lib/run-sql';
import { OPEN_LEAD_STATUSES } from '../../lib/leads/lead-final-status';
import { lockLiveAgent } from '../../lib/agents/agent-lock';
import type { CampaignStatus } from '../../lib/campaigns/campaign-transitions';
import type { CampaignStatusReason } from '../../lib/dial-ladder/carrier-breaker';
import { Prisma } from '../../generated/prisma/client';
import { ErrorCode } from '../../lib/error-codes';
import { rowNotFound } from '../../lib/temporal/refusal';
import { signalCampaignChanged } from '../../lib/temporal/campaigns';
import type { ActivityDependencies } from '../dependencies';
import { hangUpCampaignCalls } from '../calls/call-hangup';
import {
  markQueuedLeadsWaitingFor,
  releaseCampaignLines,
  settleLeadsQueuedByPush,
  stoppedLeadsPage,
  takeBackGrantedLines,
} from '../../lib/campaigns/campaign-store';
// enqueueLeadFinished is still a method of the result webhooks' factory, built where it is used: it keeps no state
// across calls that this needs.
import { enqueueLeadFinished } from '../result-webhooks/result-webhooks';

/** Stopped leads read, woken and settled at a time by notifyCampaignLeads; its progress is heartbeated after each. */
const STOPPED_LEADS_PAGE = 500;
/** Wake-ups and lead.finished events sent at once. */
const STOPPED_LEADS_AT_ONCE = 50;

/**
 * What leadLadderWorkflow settles for a lead whose campaign was stopped before any call: its first attemptCall answers
 * campaign_stopped, and it ends with its attempt counter at 1 (workflows/dial-ladder/lead-ladder.ts `end`). The
 * event sent in its stead says the same, so that receivers see no difference.
 */
const STOPPED_BEFORE_ANY_CALL = { outcome: 'campaign_stopped', attempts: 1 } as const;

/** The lead.finished events of leads settled without a workflow; idempotent (one delivery per endpoint and event key). */
async function finishWithoutWorkflow(dependencies: ActivityDependencies, leadIds: readonly string[]) {
  for (let offset = 0; offset < leadIds.length; offset += STOPPED_LEADS_AT_ONCE)
    await Promise.all(
      leadIds
        .slice(offset, offset + STOPPED_LEADS_AT_ONCE)
        .map((leadId) => enqueueLeadFinished(dependencies, { leadId, ...STOPPED_BEFORE_ANY_CALL })),
    );
}

/**
 * Commits the campaign's new status. A stop also ends, in the database, every lead still in
 * progress: their workflows end when woken, and whatever they were waiting for is cancelled; and it
 * hangs up the campaign's calls in progress.
 */
export async function setCampaignStatus(
  { db, calls }: Pick<ActivityDependencies, 'db' | 'calls'>,
  {
    campaignId,
    status,
    statusReason,
  }: {
    campaignId: string;
    status: CampaignStatus;
    /** The service's own reason (the carrier breaker); none from an operator or a key, which clears it. */
    statusReason?: CampaignStatusReason;
  },
): Promise<void> {
  await db.$transaction(async (tx) => {
    // updatedAt moves too: the carrier breaker's window starts again here (lib/dial-ladder/carrier-breaker.ts).
    const campaign = await tx.campaign.update({
      where: { id: campaignId },
      data: { status, statusReason: statusReason ?? Prisma.DbNull },
    });
    // Starting or resuming holds the campaign's agent against deletion (DELETE /agents/{id} refuses while a
    // RUNNING campaign uses it); an agent deleted meanwhile refuses the transition, and nothing changes.
    if (status === 'RUNNING' && campaign.agentId && !(await lockLiveAgent(tx, campaign.workspaceId, campaign.agentId)))
      throw ApplicationFailure.create({
        type: ErrorCode.agent_deleted,
        message: `the campaign's agent ${campaign.agentId} was deleted`,
        nonRetryable: true,
      });
    if (status === 'STOPPED') {
      await tx.lead.updateMany({
        // Only leads still open (the one rule, lib/leads/lead-final-status.ts): a finished lead keeps its status.
        where: { campaignId, status: { in: [...OPEN_LEAD_STATUSES] } },
        data: { status: 'cancelled', waitingFor: null, nextAttemptAt: null },
      });
      // Its line queue is no more: its leads end when woken (notifyCampaignLeads), and lines handed out return.
      // A lead queued by its push that never had a line has no workflow, and is to get none: starting one per lead
      // only to see the stop swamped Temporal and the worker for minutes with a long queue (10,000 leads). It is
      // settled here, marked so that the lead outbox leaves it alone (UNDISPATCHED_LEAD_SQL) and nothing wakes it;
      // notifyCampaignLeads sends its lead.finished event in its workflow's stead. One handed a line has (or is
      // being given) a workflow, even before its start is marked (the marks are written in batches): it is woken.
      await settleLeadsQueuedByPush(tx, campaignId);
      const granted = await tx.lineQueue.count({ where: { campaignId, grantedAt: { not: null } } });
      await tx.lineQueue.deleteMany({ where: { campaignId } });
      if (granted) await releaseCampaignLines(tx, campaignId, granted);
    } else {
      if (status !== 'RUNNING') {
        // A campaign not running holds no line: lines handed out and not yet used return, and their entries keep
        // their places, to be handed lines again, in order, when it runs.
        const returned = await takeBackGrantedLines(tx, campaignId);
        if (returned) await releaseCampaignLines(tx, campaignId, returned);
      }
      // Its queued leads wait for a line while it runs, for the campaign while it does not.
      await markQueuedLeadsWaitingFor(tx, campaignId, status === 'RUNNING' ? 'line' : 'campaign');
    }
  });
  // Its calls in progress are hung up; their canceled events end them and give their lines back.
  if (status === 'STOPPED') await hangUpCampaignCalls(db, calls, campaignId);
}

/**
 * After a start, resume or stop: a running campaign's free lines are handed to the first of its line queue
 * (their leads woken one by one, not all at once); the lead workflows that hold on the campaign by themselves
 * (leadDialWorkflow's runs, WHATSAPP leads) are woken, and on a stop every lead workflow, the lean ladder's too,
 * so that each ends. Returns how many were signalled.
 */
export async function notifyCampaignLeads(
  dependencies: ActivityDependencies,
  { campaignId }: { campaignId: string },
): Promise<number> {
  const { db, temporal } = dependencies;
  const campaign = await db.campaign.findUnique({
    where: { id: campaignId },
    select: { status: true, workspaceId: true },
  });
  if (!campaign) throw rowNotFound(`campaign ${campaignId}`);
  const { status, workspaceId } = campaign;
  if (status === 'RUNNING')
    await handOverLines(
      prismaSql(db),
      temporal,
      await handOutFreeLines(prismaSql(db), campaignId),
      Context.current().info.taskQueue,
    );
  if (status !== 'STOPPED') return signalCampaignChanged(temporal, campaignId);
  // Stopped: every lead the stop cancelled that has (or may have) a workflow ends when woken: the lean ladder's
  // pushed leads by signal-with-start (one whose start the outbox had not made yet starts, and ends, here),
  // journeys' call nodes and older runs by the signal to every running ladder. Those the stop settled without a
  // workflow get, in its stead, the lead.finished event it would have sent.
  // Paged by id, the last id of each page heartbeated: a retry (a long queue may outlast the start-to-close)
  // carries on after it instead of starting again from the first lead. Every step is idempotent, so a page
  // done again after a heartbeat lost is harmless.
  const context = Context.current();
  // The nil uuid is below every lead's id; a bound rather than a null keeps the (campaignId, id) index usable.
  let after = (context.info.heartbeatDetails as string | undefined) ?? '00000000-0000-0000-0000-000000000000';
  const hasEndpoint = (await db.resultWebhookEndpoint.count({ where: { workspaceId, deletedAt: null } })) > 0;
  let woken = 0;
  for (;;) {
    const page = await stoppedLeadsPage(db, campaignId, after, STOPPED_LEADS_PAGE);
    if (!page.length) break;
    woken += await wakeStoppedLeads(
      temporal,
      page.filter((lead) => !lead.settled).map((lead) => ({ ...lead, campaignId, workspaceId })),
      context.info.taskQueue,
    );
    // Only when the workspace has an endpoint, as settleLead: without one there is nothing to send.
    if (hasEndpoint)
      await finishWithoutWorkflow(
        dependencies,
        page.filter((lead) => lead.settled).map((lead) => lead.leadId),
      );
    after = page.at(-1)!.leadId;
    context.heartbeat(after);
  }
  return woken + (await signalCampaignChanged(temporal, campaignId, { everyLadder: true }));
}
