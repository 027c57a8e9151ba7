import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { CampaignAction } from '../../lib/campaigns/campaign-transitions';
import { ErrorCode } from '../../lib/error-codes';
import { nudgeContactEnrollment, transitionCampaignWorkflow } from '../../lib/temporal/campaigns';
import { refusalOf } from '../../lib/temporal/refusal';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { findOwnedCampaign } from './campaigns';
import { campaignRow, hideCampaign } from './campaign-store';
import type { AppServices } from '../app-services';
import { assertWhatsAppCampaignConfigured } from '../../lib/whatsapp/campaign-settings';
import { assertCampaignSenderConnected } from '../../lib/whatsapp/simulator-stand-in';
import { assertCallerNumbersConnected, unboundCallerRefusal } from '../../lib/carrier-connections/simulator-stand-in';
import { prismaSql } from '../../lib/run-sql';
import type { Campaign } from '../../generated/prisma/client';

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
    throw new Refusal(ErrorCode.api_key_not_allowed);
  if (campaign.channel === 'WHATSAPP' && campaign.kind !== 'JOURNEY' && (action === 'start' || action === 'resume'))
    await assertWhatsAppCampaignConfigured(services.db, campaign.id);
  if (action === 'start' || action === 'resume') await assertStandInsNotNeeded(services, campaign);
  try {
    // Bounded: while Temporal is unreachable the caller gets 503 temporal_unavailable, not a hung request.
    await transitionCampaignWorkflow(
      services.temporal,
      services.taskQueue,
      { id: campaign.id, status: campaign.status, workspaceId: principal.workspaceId },
      action,
    );
  } catch (error) {
    const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === ErrorCode.invalid_campaign_transition) {
      const [details] = cause.details as [{ from: string; action: string }];
      throw new Refusal(ErrorCode.invalid_campaign_transition, { from: details.from, action: details.action });
    }
    if (refusalOf(cause)?.type === ErrorCode.agent_deleted)
      throw new Refusal(ErrorCode.agent_deleted, {
        agentId: campaign.agentId,
        detail: 'set another agentId (or null) with PATCH /campaigns/{id}, then try again',
      });
    throw error;
  }
  if (action === 'start' || action === 'resume')
    await nudgeContactEnrollment(services.temporal, services.taskQueue, {
      id: campaign.id,
      workspaceId: principal.workspaceId,
    });
  return campaignRow(services.db, campaign.id);
}

/** Stops the campaign (through its workflow, like POST /stop) unless it is stopped, then hides it. */
export async function deleteCampaign(services: AppServices, principal: Principal, id: string): Promise<void> {
  const campaign = await findOwnedCampaign(services, principal, id);
  if (campaign.status !== 'STOPPED') await transitionCampaign(services, principal, campaign.id, 'stop');
  // Stopped: its queued retries are cancelled and enrollment ends; its calling list goes with it.
  await hideCampaign(services.db, campaign.id);
}

/**
 * While SIMULATORS is disabled (docs/configuration.md#simulators), a campaign starts or resumes only if what it
 * would call or message from is carried by a real connection: a VOICE campaign's caller numbers (a CLASSIC one needs
 * one at least: without it the call would go to the simulated carrier), a CLASSIC WHATSAPP campaign's sender. A
 * JOURNEY's call or message nodes meet the same refusal at the worker (lib/providers.ts).
 */
async function assertStandInsNotNeeded(services: AppServices, campaign: Campaign): Promise<void> {
  if (services.simulators !== 'disabled') return;
  if (campaign.channel === 'VOICE') {
    if (campaign.kind === 'CLASSIC' && campaign.callerNumbers.length === 0) throw unboundCallerRefusal(null);
    await assertCallerNumbersConnected(
      prismaSql(services.db),
      services.simulators,
      campaign.workspaceId,
      campaign.callerNumbers,
    );
  }
  if (campaign.channel === 'WHATSAPP' && campaign.kind === 'CLASSIC')
    await assertCampaignSenderConnected(services.db, services.simulators, campaign.id);
}
