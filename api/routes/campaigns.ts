import { z } from 'zod';
import { defineRoute } from '../http/route';
import { CAMPAIGN_ACTIONS } from '../../lib/campaign-transitions';
import { transitionCampaign } from '../services/campaign-control';
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
  ...CAMPAIGN_ACTIONS.map((action) =>
    defineRoute({
      method: 'post',
      path: `/campaigns/{id}/${action}`,
      access: { permission: 'campaigns.edit' },
      summary: `${action[0]!.toUpperCase()}${action.slice(1)} the campaign: a Temporal Update of the campaign's workflow, answered once accepted. `
        + 'start DRAFT->RUNNING, pause RUNNING->PAUSED, resume PAUSED->RUNNING, stop DRAFT|RUNNING|PAUSED->STOPPED; anything else is 409 invalid_campaign_transition with from and action. '
        + 'Keys may not start or resume EMAIL campaigns (403 api_key_not_allowed).',
      tags: ['Campaigns'],
      params: campaignParams,
      responses: { 200: { description: 'The campaign after the transition.', schema: campaignSchema } },
      handler: async ({ services, principal, params }) => ({
        status: 200,
        body: campaignView(await transitionCampaign(services, principal, params.id, action)),
      }),
    }),
  ),
];
