import { log } from '../../lib/log';
import { handOutFreeLines } from '../../lib/calls/call-lines';
import { handOverLines } from '../../lib/temporal/line-queue';
import { poolSql } from '../../lib/run-sql';
import { ZodError } from 'zod';
import { Prisma, type Campaign } from '../../generated/prisma/client';
import { DEFAULT_CALLING_WINDOW, type CallingWindow } from '../../lib/dial-ladder/calling-window';
import type { CampaignStatusReason } from '../../lib/dial-ladder/carrier-breaker';
import { DEFAULT_DIAL_LADDER, type DialLadder } from '../../lib/dial-ladder/dial-ladder';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal, forbidden } from '../../lib/refusal';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { writeNamingAgent } from './campaign-agents';
import { checkCallerNumbers } from './caller-numbers';
import { isUuid } from '../../lib/uuid';
import {
  campaignsOfWorkspace,
  insertCampaign,
  journeyIdOfWorkspace,
  ownedCampaignRow,
  updateCampaignRow,
} from './campaign-store';

export interface CampaignSettings {
  name?: string;
  acceptsLeadPush?: boolean;
  dialLadder?: DialLadder | null;
  callingWindow?: CallingWindow | null;
  agentId?: string | null;
  callerNumbers?: string[];
  maxConcurrentCalls?: number;
  /** JOURNEY: the journey its leads are enrolled into, under the API's name for it. */
  workflowId?: string | null;
  maxLiveRuns?: number;
}

export interface NewCampaign extends CampaignSettings {
  name: string;
  kind: 'CLASSIC' | 'JOURNEY';
  channel: 'VOICE' | 'WHATSAPP' | 'EMAIL';
}

/** Prisma stores a JSON null as DbNull: null in the API means "the documented default". The API's workflowId is the journey. */
function storable(settings: CampaignSettings) {
  const { dialLadder, callingWindow, workflowId, ...rest } = settings;
  return {
    ...rest,
    ...(workflowId !== undefined ? { journeyId: workflowId } : {}),
    ...(dialLadder !== undefined ? { dialLadder: dialLadder ?? Prisma.DbNull } : {}),
    ...(callingWindow !== undefined ? { callingWindow: callingWindow ?? Prisma.DbNull } : {}),
  };
}

export async function createCampaign(services: AppServices, principal: Principal, input: NewCampaign) {
  const { db } = services;
  if (input.channel === 'EMAIL') throw new Refusal(ErrorCode.api_key_not_allowed);
  await checkJourneySettings(db, principal, input.kind, input.workflowId);
  await checkCallerNumbers(services, principal, input.callerNumbers);
  return writeNamingAgent(db, principal, input.agentId, (tx) =>
    insertCampaign(tx, {
      ...storable(input),
      name: input.name,
      kind: input.kind,
      channel: input.channel,
      workspaceId: principal.workspaceId,
    }),
  );
}

export async function updateCampaign(
  services: AppServices,
  principal: Principal,
  id: string,
  settings: CampaignSettings,
) {
  const campaign = await findOwnedCampaign(services, principal, id);
  if (campaign.status === 'STOPPED') throw new Refusal(ErrorCode.campaign_stopped);
  if (settings.workflowId !== undefined)
    await checkJourneySettings(services.db, principal, campaign.kind, settings.workflowId);
  await checkCallerNumbers(services, principal, settings.callerNumbers);
  const updated = await writeNamingAgent(services.db, principal, settings.agentId, (tx) =>
    updateCampaignRow(tx, campaign.id, storable(settings)),
  );
  // A raised cap frees lines: they go to the first of the line queue at once (docs/features/dial-ladder.md#lines-handed-out).
  if (settings.maxConcurrentCalls !== undefined && settings.maxConcurrentCalls > campaign.maxConcurrentCalls)
    await handOutLinesNow(services, campaign.id);
  return updated;
}

/**
 * Hands a running campaign's free lines to the first of its line queue and wakes them. Failing here changes
 * nothing the caller committed: the lines wait for the next call's end, or the sweep of an unused line.
 */
async function handOutLinesNow(services: AppServices, campaignId: string): Promise<void> {
  const sql = poolSql(services.sql);
  try {
    await handOverLines(sql, services.temporal, await handOutFreeLines(sql, campaignId), services.taskQueue);
  } catch (error) {
    log.warn({ err: error, campaignId }, 'free lines not handed out after a raised cap');
  }
}

/** A JOURNEY campaign names a journey of its own workspace (the API's workflowId); a CLASSIC one names none. */
async function checkJourneySettings(
  db: AppServices['db'],
  principal: Principal,
  kind: 'CLASSIC' | 'JOURNEY',
  journeyId: string | null | undefined,
) {
  const invalid = (message: string) =>
    new ZodError([{ code: 'custom', path: ['workflowId'], message, input: journeyId }]);
  if (kind === 'CLASSIC') {
    if (journeyId) throw invalid('only a JOURNEY campaign runs a workflow');
    return;
  }
  if (!journeyId) throw invalid('a JOURNEY campaign names the workflow its leads are enrolled into');
  const journey = isUuid(journeyId) ? await journeyIdOfWorkspace(db, principal.workspaceId, journeyId) : null;
  if (!journey) throw invalid('no workflow of this workspace has this id');
}

export async function listCampaigns({ db }: AppServices, principal: Principal): Promise<Campaign[]> {
  return campaignsOfWorkspace(db, principal.workspaceId);
}

/**
 * A campaign of the caller's workspace. An unknown id and another workspace's campaign get the same
 * 403 forbidden from the same single query, so neither the body nor the timing tells them apart.
 */
export async function findOwnedCampaign({ sql }: AppServices, principal: Principal, id: string): Promise<Campaign> {
  const campaign = isUuid(id) ? await ownedCampaignRow(sql, principal.workspaceId, id) : undefined;
  if (!campaign) throw forbidden();
  return campaign;
}

export function campaignView(campaign: Campaign) {
  return {
    id: campaign.id,
    name: campaign.name,
    kind: campaign.kind,
    channel: campaign.channel,
    status: campaign.status,
    statusReason: (campaign.statusReason as CampaignStatusReason | null) ?? null,
    acceptsLeadPush: campaign.acceptsLeadPush,
    dialLadder: (campaign.dialLadder as DialLadder | null) ?? DEFAULT_DIAL_LADDER,
    callingWindow: (campaign.callingWindow as CallingWindow | null) ?? DEFAULT_CALLING_WINDOW,
    agentId: campaign.agentId,
    callerNumbers: campaign.callerNumbers,
    maxConcurrentCalls: campaign.maxConcurrentCalls,
    workflowId: campaign.journeyId,
    maxLiveRuns: campaign.maxLiveRuns,
    createdAt: campaign.createdAt.toISOString(),
    updatedAt: campaign.updatedAt.toISOString(),
  };
}
