import { WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateStage, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { CampaignAction, CampaignStatus } from '../campaigns/campaign-transitions';
import type { CampaignStatusReason } from '../dial-ladder/carrier-breaker';
import { ErrorCode } from '../error-codes';
import { campaignChangedSignal, campaignTransitionUpdate, enrollmentNudgeSignal } from './messages';
import { signalWithStartWorkflow, startWorkflowOperation } from './start-workflow';
import { campaignWorkflowId, contactEnrollmentWorkflowId } from './workflow-ids';
import { LEAD_LADDER_WORKFLOW_TYPES } from './workflow-contracts';

/*
 * A campaign's workflows as a client reaches them: its control workflow (workflows/campaigns/campaign.ts),
 * moved by Updates; the enrollment of its calling list (workflows/dial-ladder/contact-enrollment.ts); and its
 * leads' workflows, woken when its status changes.
 */

/** A transition or an enrollment nudge asked by a request: bounded, so that an unreachable Temporal is a 503, not a hung request. */
const TRANSITION_DEADLINE_MS = 5_000;

/** The campaign as its control workflow is started with, and the workspace it is found by (search attribute). */
export interface ControlledCampaign {
  id: string;
  status: CampaignStatus;
  workspaceId: string;
}

/**
 * Sends a start, pause, resume or stop to the campaign's workflow as an Update, starting the workflow on
 * first use (with the campaign's stored status), and waits until the workflow has committed it. A transition
 * the workflow refuses is thrown as the SDK's WorkflowUpdateFailedError, which the caller reads.
 */
export async function transitionCampaignWorkflow(
  temporal: Client,
  taskQueue: string,
  campaign: ControlledCampaign,
  action: CampaignAction,
): Promise<{ status: CampaignStatus }> {
  return temporal.connection.withDeadline(Date.now() + TRANSITION_DEADLINE_MS, () =>
    temporal.workflow.executeUpdateWithStart(campaignTransitionUpdate, {
      args: [action],
      startWorkflowOperation: startWorkflowOperation('campaignWorkflow', {
        workflowId: campaignWorkflowId(campaign.id),
        taskQueue,
        args: [{ campaignId: campaign.id, status: campaign.status }],
        workflowIdConflictPolicy: 'USE_EXISTING',
        searchAttributes: { CampaignId: [campaign.id], WorkspaceId: [campaign.workspaceId] },
      }),
    }),
  );
}

/**
 * Starts (or nudges) the workflow that turns the campaign's calling list into leads, paced by its concurrency
 * cap: one Temporal call, whatever the size of the list. It ends at once when there is nothing to enroll.
 */
export async function nudgeContactEnrollment(
  temporal: Client,
  taskQueue: string,
  campaign: { id: string; workspaceId: string },
): Promise<void> {
  await temporal.connection.withDeadline(Date.now() + TRANSITION_DEADLINE_MS, () =>
    signalWithStartWorkflow(temporal, 'contactEnrollmentWorkflow', {
      workflowId: contactEnrollmentWorkflowId(campaign.id),
      taskQueue,
      args: [{ campaignId: campaign.id }],
      signal: enrollmentNudgeSignal,
      searchAttributes: { CampaignId: [campaign.id], WorkspaceId: [campaign.workspaceId] },
    }),
  );
}

/**
 * Asks the campaign's workflow to pause it with the service's own reason (the carrier breaker), and waits only
 * until the workflow has accepted the pause (durable from then on), not for its commit. True when accepted;
 * false when no workflow controls the campaign (never started through the API) or the workflow refused the
 * pause (already paused, or stopped).
 */
export async function requestCampaignPause(
  temporal: Client,
  campaignId: string,
  reason: CampaignStatusReason,
): Promise<boolean> {
  try {
    await temporal.workflow.getHandle(campaignWorkflowId(campaignId)).startUpdate(campaignTransitionUpdate, {
      args: ['pause', reason],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    });
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === ErrorCode.invalid_campaign_transition) return false;
    throw error;
  }
}

/**
 * Wakes the campaign's running lead workflows that hold while it is not running (leadDialWorkflow's runs and a
 * WHATSAPP campaign's leadMessageWorkflow) with campaignChanged; with everyLadder (a stop) the lean ladder's
 * (LEAD_LADDER_WORKFLOW_TYPES) too, which otherwise wait in the line queue for their line, not for a signal to all. A lead
 * that ends meanwhile is skipped. Answers how many were signalled.
 */
export async function signalCampaignChanged(
  temporal: Client,
  campaignId: string,
  { everyLadder = false }: { everyLadder?: boolean } = {},
): Promise<number> {
  let signalled = 0;
  const pending: Promise<unknown>[] = [];
  const types = ['leadDialWorkflow', 'leadMessageWorkflow', ...(everyLadder ? LEAD_LADDER_WORKFLOW_TYPES : [])];
  const query = `CampaignId = "${campaignId}" AND WorkflowType IN (${types.map((type) => `"${type}"`).join(', ')}) AND ExecutionStatus = "Running"`;
  for await (const execution of temporal.workflow.list({ query })) {
    pending.push(
      temporal.workflow
        .getHandle(execution.workflowId, execution.runId)
        .signal(campaignChangedSignal)
        .catch(() => undefined),
    );
    signalled++;
    if (pending.length >= 50) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
  return signalled;
}
