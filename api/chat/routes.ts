import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { ErrorCode } from '../../lib/error-codes';
import { defineRoute } from '../http/route';
import { NDJSON_MEDIA_TYPE } from '../http/ndjson';
import { askCampaign, clearCampaignChat, DEFAULT_CHAT_MESSAGE_CAP } from './campaign-chat';

const campaignParams = z.object({ id: z.string() });

/** One line of the answer. */
export const chatEventSchema = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('delta'), text: z.string().describe('The next fragment of the answer.') }),
    z.strictObject({
      type: z.literal('done'),
      text: z.string().describe('The whole answer: every delta joined. The last line of a complete answer.'),
    }),
    z.strictObject({
      type: z.literal('error'),
      message: z.string().describe('Why the answer broke off (the chat model failed or timed out). The last line.'),
    }),
  ])
  .describe('One line of application/x-ndjson: delta fragments as produced, then done; or, on a failure, error.');

const CONVERSATION =
  'One conversation per campaign, shared by the workspace (every key and member of it): its messages are the context of ' +
  `the next question. Fair-use cap: ${DEFAULT_CHAT_MESSAGE_CAP} questions asked of a campaign unless the operator sets the ` +
  "workspace's own (`npm run admin -- workspace set --chat-message-cap N`); the question over it is 429 message_limit_reached, " +
  'nothing stored, nothing streamed. The cap counts the questions asked, not those the conversation holds: ' +
  'DELETE /campaigns/{id}/chat/messages clears the conversation but gives no question back.';

export const campaignChatRoutes = [
  defineRoute({
    method: 'post',
    path: '/campaigns/{id}/chat/stream',
    access: { permission: 'intel.view', requires: { plan: 'ai' } },
    summary:
      'Ask about a campaign. The answer is application/x-ndjson, one JSON event a line: {"type":"delta","text"} fragments as they ' +
      'are produced, then {"type":"done","text": the whole answer}; a failure after the answer began is a last ' +
      '{"type":"error","message"} line. Refusals (validation, the door, the cap, another workspace\'s campaign) are ordinary JSON ' +
      'error answers, sent before anything is streamed. The answer comes from CHAT_PROVIDER: the builtin-analyst (default; the ' +
      "campaign's own figures by SQL, equal to GET /campaigns/{id}/kpis; topics: connect and pickup rates, hours and days, " +
      'outcomes and failure reasons, best hours, extracted intelligence, attributed orders and revenue; it says plainly what ' +
      'it cannot answer) or a chat model behind an OpenAI-compatible endpoint, given the same facts and the conversation. ' +
      `${CONVERSATION} The question is stored when accepted; the answer only once complete (a client that disconnects stops ` +
      'the work and a failed answer is not kept: the question stays, counted).',
    tags: ['Campaign chat'],
    params: campaignParams,
    body: z.strictObject({
      message: z.string().min(1).check(atMostCodePoints(4000)).describe('The question, 1 to 4000 characters.'),
    }),
    responses: {
      200: { description: 'The answer as NDJSON events.', schema: chatEventSchema, contentType: NDJSON_MEDIA_TYPE },
    },
    errors: { 429: [ErrorCode.message_limit_reached] },
    handler: async ({ services, principal, params, body, signal }) => ({
      status: 200,
      events: await askCampaign(services, principal, params.id, body.message, signal),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/campaigns/{id}/chat/messages',
    // The dashboard's permission is intel.view; a key needs campaigns.delete (spec section 5). The plan rule of intel.view's rows.
    access: { permission: 'campaigns.delete', requires: { plan: 'basic' } },
    summary:
      "Clear the campaign's conversation: every question and answer is deleted; the questions asked still count against the fair-use cap. " +
      'Answers { deleted } (messages removed; 0 when it was empty). A key needs campaigns.delete; the workspace a plan with ' +
      'business intelligence (basic or above).',
    tags: ['Campaign chat'],
    params: campaignParams,
    responses: {
      200: {
        description: 'The conversation is empty.',
        schema: z.object({ deleted: z.number().int().describe('Messages deleted (questions and answers).') }),
      },
    },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await clearCampaignChat(services, principal, params.id),
    }),
  }),
];
