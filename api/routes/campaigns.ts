import { z } from 'zod';
import { defineRoute } from '../http/route';
import { ErrorCode } from '../../lib/error-codes';
import { ApiError } from '../http/api-error';
import { campaignView, createCampaign, findOwnedCampaign, listCampaigns } from '../services/campaigns';

export const campaignSchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  kind: z.enum(['CLASSIC', 'JOURNEY']),
  channel: z.enum(['VOICE', 'WHATSAPP', 'EMAIL']),
  status: z.enum(['DRAFT', 'RUNNING', 'PAUSED', 'STOPPED']),
  acceptsLeadPush: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const newCampaignSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  kind: z.enum(['CLASSIC', 'JOURNEY']).default('CLASSIC'),
  channel: z.enum(['VOICE', 'WHATSAPP', 'EMAIL']).default('VOICE'),
  acceptsLeadPush: z.boolean().default(false).describe('A standing API campaign: accepts POST /v1/campaigns/{id}/leads.'),
});

const campaignParams = z.object({ id: z.string() });

export const campaignRoutes = [
  defineRoute({
    method: 'post',
    path: '/campaigns',
    access: { permission: 'campaigns.edit' },
    summary: 'Create a campaign. Keys may not create EMAIL campaigns (403 api_key_not_allowed).',
    tags: ['Campaigns'],
    body: newCampaignSchema,
    responses: { 201: { description: 'Created.', schema: campaignSchema } },
    handler: async ({ services, principal, body }) => ({
      status: 201,
      body: campaignView(await createCampaign(services, principal, body)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/{id}',
    access: { permission: 'campaigns.view' },
    summary: 'Read one campaign.',
    tags: ['Campaigns'],
    params: campaignParams,
    responses: { 200: { description: 'The campaign.', schema: campaignSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: campaignView(await findOwnedCampaign(services, principal, params.id)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns',
    access: { permission: 'campaigns.view' },
    summary: "List the workspace's campaigns (unpaginated, newest first).",
    tags: ['Campaigns'],
    responses: { 200: { description: 'Every campaign of the workspace.', schema: z.array(campaignSchema) } },
    handler: async ({ services, principal }) => ({
      status: 200,
      body: (await listCampaigns(services, principal)).map(campaignView),
    }),
  }),
  ...(['start', 'resume'] as const).map((transition) =>
    defineRoute({
      method: 'post',
      path: `/campaigns/{id}/${transition}`,
      access: { permission: 'campaigns.edit' },
      summary: `${transition === 'start' ? 'Start' : 'Resume'} a campaign. Keys may not ${transition} EMAIL campaigns (403 api_key_not_allowed). Not built yet otherwise (501).`,
      tags: ['Campaigns'],
      params: campaignParams,
      handler: async ({ services, principal, params }) => {
        const campaign = await findOwnedCampaign(services, principal, params.id);
        if (campaign.channel === 'EMAIL') throw new ApiError(403, ErrorCode.api_key_not_allowed);
        throw new ApiError(501, ErrorCode.not_implemented);
      },
    }),
  ),
];
