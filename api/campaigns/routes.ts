import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { callingWindowSchema } from '../../lib/dial-ladder/calling-window';
import { dialLadderSchema } from '../../lib/dial-ladder/dial-ladder';
import { ErrorCode } from '../../lib/error-codes';
import { e164PhoneSchema } from '../../lib/phone';
import { defineRoute } from '../http/route';
import { CAMPAIGN_ACTIONS } from '../../lib/campaigns/campaign-transitions';
import { campaignStatusReasonSchema } from '../../lib/dial-ladder/carrier-breaker';
import { deleteCampaign, transitionCampaign } from './campaign-control';
import { campaignView, createCampaign, findOwnedCampaign, listCampaigns, updateCampaign } from './campaigns';

/** Settings a campaign is created with and can change while it is not stopped. */
const campaignSettings = {
  name: z.string().trim().min(1).check(atMostCodePoints(200)),
  acceptsLeadPush: z
    .boolean()
    .describe('A standing API campaign: accepts POST /v1/campaigns/{id}/leads (while not stopped).'),
  dialLadder: dialLadderSchema
    .nullable()
    .describe(
      'CLASSIC dial ladder: rungs (delaySeconds after the previous attempt) and the rule of each outcome (end or next). null: the default, now / +2 h / +1 day, answered and invalid_number end it.',
    ),
  callingWindow: callingWindowSchema
    .nullable()
    .describe(
      "When leads may be called in their own local time (from the number's country and region; every possible zone must agree). null: the default, Monday to Saturday 09:00-20:00.",
    ),
  agentId: z
    .guid('not an agent id')
    .toLowerCase()
    .nullable()
    .describe(
      "The calling agent: a live agent of the workspace (GET /agents); an unknown, deleted or another workspace's agent is 400 invalid_body on agentId. null: none.",
    ),
  callerNumbers: z
    .array(e164PhoneSchema)
    .max(100)
    .describe(
      'E.164 numbers calls are placed from: each must be a number of GET /phone-numbers with voice capability (400 invalid_body naming callerNumbers.<index> otherwise), and, while simulators are disabled (SIMULATORS, the production default), bound to a carrier connection (409 no_carrier_connection naming the first that is not).',
    ),
  maxConcurrentCalls: z.number().int().min(1).max(1000).describe('Calls of this campaign in flight at once, at most.'),
  // A uuid, or the id would reach a uuid column and fail there.
  workflowId: z
    .string()
    .uuid()
    .nullable()
    .describe(
      'JOURNEY (required): the workflow of this workspace whose published revision each pushed lead is enrolled into (revision fixed at enrollment). CLASSIC: null.',
    ),
  maxLiveRuns: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .describe(
      'JOURNEY live cap: runs alive at once (running or needing recovery). A lead over it is rejected with retryable true (error journey_live_cap_reached) and accepted later with the same key. Default 1000.',
    ),
};

export const campaignSchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  kind: z.enum(['CLASSIC', 'JOURNEY']),
  channel: z.enum(['VOICE', 'WHATSAPP', 'EMAIL']),
  status: z.enum(['DRAFT', 'RUNNING', 'PAUSED', 'STOPPED']),
  statusReason: campaignStatusReasonSchema.nullable(),
  acceptsLeadPush: z.boolean(),
  dialLadder: dialLadderSchema,
  callingWindow: callingWindowSchema,
  agentId: z.string().nullable(),
  callerNumbers: z.array(z.string()),
  maxConcurrentCalls: z.number().int(),
  workflowId: z.string().nullable(),
  maxLiveRuns: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const newCampaignSchema = z
  .strictObject({
    ...campaignSettings,
    kind: z
      .enum(['CLASSIC', 'JOURNEY'])
      .default('CLASSIC')
      .describe(
        'CLASSIC: each lead is dialed on the dial ladder. JOURNEY: each lead is enrolled into a run of workflowId.',
      ),
    channel: z.enum(['VOICE', 'WHATSAPP', 'EMAIL']).default('VOICE'),
    acceptsLeadPush: campaignSettings.acceptsLeadPush.default(false),
  })
  .partial({
    dialLadder: true,
    callingWindow: true,
    agentId: true,
    callerNumbers: true,
    maxConcurrentCalls: true,
    workflowId: true,
    maxLiveRuns: true,
  });

const campaignUpdateSchema = z
  .strictObject(campaignSettings)
  .partial()
  .refine((update) => Object.keys(update).length > 0, { message: 'give at least one setting to change' });

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
    errors: { 403: [ErrorCode.api_key_not_allowed], 409: [ErrorCode.no_carrier_connection] },
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
    method: 'patch',
    path: '/campaigns/{id}',
    access: { permission: 'campaigns.edit' },
    summary:
      'Change the settings of a campaign that is not stopped (409 campaign_stopped). Leads already started keep the ladder and window they started with.',
    tags: ['Campaigns'],
    params: campaignParams,
    body: campaignUpdateSchema,
    responses: { 200: { description: 'The campaign.', schema: campaignSchema } },
    errors: { 409: [ErrorCode.campaign_stopped, ErrorCode.no_carrier_connection] },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: campaignView(await updateCampaign(services, principal, params.id, body)),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/campaigns/{id}',
    access: { permission: 'campaigns.delete' },
    summary:
      'Delete a campaign: it is stopped first (queued retries are cancelled, every lead in progress ends cancelled), then removed from the API. Its leads and calls stay in results.',
    tags: ['Campaigns'],
    params: campaignParams,
    responses: { 204: { description: 'Deleted.' } },
    // Stopping goes through the campaign's workflow; a stop that raced another one is refused as a transition.
    errors: { 409: [ErrorCode.invalid_campaign_transition], 503: [ErrorCode.temporal_unavailable] },
    handler: async ({ services, principal, params }) => {
      await deleteCampaign(services, principal, params.id);
      return { status: 204 };
    },
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
      summary:
        `${action[0]!.toUpperCase()}${action.slice(1)} the campaign: a Temporal Update of the campaign's workflow, answered once accepted. ` +
        'start DRAFT->RUNNING, pause RUNNING->PAUSED, resume PAUSED->RUNNING, stop DRAFT|RUNNING|PAUSED->STOPPED; anything else is 409 invalid_campaign_transition with from and action. ' +
        'Keys may not start or resume EMAIL campaigns (403 api_key_not_allowed). A WHATSAPP campaign starts or resumes only once its messaging is set (PUT /whatsapp/campaigns/{id}; else 409 whatsapp_campaign_not_configured). ' +
        'While simulators are disabled (SIMULATORS, the production default), a VOICE campaign starts or resumes only with caller numbers each bound to a carrier connection (409 no_carrier_connection naming the first that is not, or e164 null when a CLASSIC campaign has none), a WHATSAPP one only with a sender bound to a Meta connection (409 no_whatsapp_connection).',
      tags: ['Campaigns'],
      params: campaignParams,
      responses: { 200: { description: 'The campaign after the transition.', schema: campaignSchema } },
      errors: {
        // start and resume: the campaign's agent was deleted (docs/features/agents.md).
        409:
          action === 'start' || action === 'resume'
            ? [
                ErrorCode.invalid_campaign_transition,
                ErrorCode.agent_deleted,
                ErrorCode.whatsapp_campaign_not_configured,
                ErrorCode.no_carrier_connection,
                ErrorCode.no_whatsapp_connection,
              ]
            : [ErrorCode.invalid_campaign_transition],
        503: [ErrorCode.temporal_unavailable],
        ...(action === 'start' || action === 'resume' ? { 403: [ErrorCode.api_key_not_allowed] } : {}),
      },
      handler: async ({ services, principal, params }) => ({
        status: 200,
        body: campaignView(await transitionCampaign(services, principal, params.id, action)),
      }),
    }),
  ),
];
