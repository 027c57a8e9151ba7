import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { CampaignAction } from '../../lib/campaigns/campaign-transitions';
import { ErrorCode } from '../../lib/error-codes';
import { campaignWorkflowId, contactEnrollmentWorkflowId } from '../../lib/temporal/workflow-ids';
import type { campaignWorkflow } from '../../workflows/campaigns/campaign';
import type { contactEnrollmentWorkflow } from '../../workflows/dial-ladder/contact-enrollment';
import { campaignTransitionUpdate, enrollmentNudgeSignal } from '../../lib/temporal/messages';
import { refusalOf } from '../../lib/temporal/refusal';
import type { Principal } from '../door/principal';
import { ApiError } from '../http/api-error';
import { findOwnedCampaign } from './campaigns';
import type { AppServices } from '../app-services';
import { assertWhatsAppCampaignConfigured } from '../whatsapp/whatsapp-campaigns';

const TRANSITION_DEADLINE_MS = 5_000;

/**
 * Sends a start, pause, resume or stop to the campaign's workflow as an Update (starting the workflow
 * on first use) and answers with the campaign as the transition left it. A transition the campaign's
 * state does not allow is refused with 409 invalid_campaign_transition, naming the state and action.
 */
export async function transitionCampaign(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  action: CampaignAction,
) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  if (campaign.channel === 'EMAIL' && (action === 'start' || action === 'resume'))
    throw new ApiError(403, ErrorCode.api_key_not_allowed);
  if (campaign.channel === 'WHATSAPP' && campaign.kind !== 'JOURNEY' && (action === 'start' || action === 'resume'))
    await assertWhatsAppCampaignConfigured(services, campaign.id);
  try {
    // Bounded: while Temporal is unreachable the caller gets 503 temporal_unavailable, not a hung request.
    await services.temporalConnection.withDeadline(Date.now() + TRANSITION_DEADLINE_MS, () =>
      services.temporal.workflow.executeUpdateWithStart(campaignTransitionUpdate, {
        args: [action],
        startWorkflowOperation: new WithStartWorkflowOperation<typeof campaignWorkflow>('campaignWorkflow', {
          workflowId: campaignWorkflowId(campaign.id),
          taskQueue: services.taskQueue,
          args: [{ campaignId: campaign.id, status: campaign.status }],
          workflowIdConflictPolicy: 'USE_EXISTING',
          searchAttributes: { CampaignId: [campaign.id], WorkspaceId: [principal.workspaceId] },
        }),
      }),
    );
  } catch (error) {
    const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === ErrorCode.invalid_campaign_transition) {
      const [details] = cause.details as [{ from: string; action: string }];
      throw new ApiError(409, ErrorCode.invalid_campaign_transition, { from: details.from, action: details.action });
    }
    if (refusalOf(cause)?.type === ErrorCode.agent_deleted)
      throw new ApiError(409, ErrorCode.agent_deleted, {
        agentId: campaign.agentId,
        detail: 'set another agentId (or null) with PATCH /campaigns/{id}, then try again',
      });
    throw error;
  }
  if (action === 'start' || action === 'resume') await enrollContacts(services, principal, campaign.id);
  return services.db.campaign.findUniqueOrThrow({ where: { id: campaign.id } });
}

/**
 * Starts (or nudges) the workflow that turns the calling list into leads, paced by the concurrency cap:
 * one Temporal call, whatever the size of the list. It ends at once when there is nothing to enroll.
 */
async function enrollContacts(services: AppServices, principal: Principal, campaignId: string) {
  await services.temporalConnection.withDeadline(Date.now() + TRANSITION_DEADLINE_MS, () =>
    services.temporal.workflow.signalWithStart<typeof contactEnrollmentWorkflow>('contactEnrollmentWorkflow', {
      workflowId: contactEnrollmentWorkflowId(campaignId),
      taskQueue: services.taskQueue,
      args: [{ campaignId }],
      signal: enrollmentNudgeSignal,
      searchAttributes: { CampaignId: [campaignId], WorkspaceId: [principal.workspaceId] },
    }),
  );
}

/** Stops the campaign (through its workflow, like POST /stop) unless it is stopped, then hides it. */
export async function deleteCampaign(services: AppServices, principal: Principal, id: string): Promise<void> {
  const campaign = await findOwnedCampaign(services, principal, id);
  if (campaign.status !== 'STOPPED') await transitionCampaign(services, principal, campaign.id, 'stop');
  // Stopped: its queued retries are cancelled and enrollment ends; its calling list goes with it.
  await services.db.$transaction([
    services.db.campaignContact.deleteMany({ where: { campaignId: campaign.id } }),
    services.db.campaign.update({ where: { id: campaign.id }, data: { deletedAt: new Date() } }),
  ]);
}
