import type { Campaign } from '../../generated/prisma/client';
import { ErrorCode } from '../../lib/error-codes';
import { ApiError, forbidden } from '../http/api-error';
import type { Principal } from '../auth/principal';
import type { AppServices } from './index';

export interface NewCampaign {
  name: string;
  kind: 'CLASSIC' | 'JOURNEY';
  channel: 'VOICE' | 'WHATSAPP' | 'EMAIL';
  acceptsLeadPush: boolean;
}

export async function createCampaign({ db }: AppServices, principal: Principal, input: NewCampaign) {
  if (input.channel === 'EMAIL') throw new ApiError(403, ErrorCode.api_key_not_allowed);
  return db.campaign.create({ data: { ...input, workspaceId: principal.workspaceId } });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A campaign of the caller's workspace. An unknown id and another workspace's campaign get the same
 * 403 forbidden from the same single query, so neither the body nor the timing tells them apart.
 */
export async function findOwnedCampaign({ db }: AppServices, principal: Principal, id: string): Promise<Campaign> {
  const campaign = UUID.test(id) ? await db.campaign.findFirst({ where: { id, workspaceId: principal.workspaceId } }) : null;
  if (!campaign) throw forbidden();
  return campaign;
}

export async function listCampaigns({ db }: AppServices, principal: Principal): Promise<Campaign[]> {
  return db.campaign.findMany({ where: { workspaceId: principal.workspaceId }, orderBy: { createdAt: 'desc' } });
}

export function campaignView(campaign: Campaign) {
  return {
    id: campaign.id,
    name: campaign.name,
    kind: campaign.kind,
    channel: campaign.channel,
    status: campaign.status,
    acceptsLeadPush: campaign.acceptsLeadPush,
    createdAt: campaign.createdAt.toISOString(),
    updatedAt: campaign.updatedAt.toISOString(),
  };
}
