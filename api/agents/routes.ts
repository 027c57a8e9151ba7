import { z } from 'zod';
import { BACKGROUND_AUDIO_PLAYBACK } from '../../lib/background-audio/carrier-playback';
import {
  EXTRACTION_FIELD_TYPES,
  agentUpdateSchema,
  documentIdsSchema,
  newAgentSchema,
  TRANSFER_MODES,
} from '../../lib/agents/agent-definition';
import { CONVERSATION_ENGINES } from '../../lib/conversation/conversation-engine';
import { ErrorCode } from '../../lib/error-codes';
import { defineRoute } from '../http/route';
import { listAgentDocuments, replaceAgentDocuments, unlinkAgentDocument } from './agent-documents';
import { createAgent, deleteAgent, getAgent, listAgents, updateAgent } from './agents';

export const agentSchema = z.object({
  id: z.string().uuid().describe('The agent id.'),
  name: z.string().describe('The agent name.'),
  language: z.string().describe('BCP 47 tag, canonical form.'),
  voiceId: z.string().describe('A voice id of GET /voices.'),
  script: z
    .object({ openingLine: z.string(), questions: z.array(z.string()), closing: z.string() })
    .describe('What the agent says: its opening line, its questions in order, its closing.'),
  extractionFields: z
    .array(
      z.object({
        name: z.string().describe('Identifier-like, unique within the agent ignoring case.'),
        type: z.enum(EXTRACTION_FIELD_TYPES).describe('The type of value the field holds.'),
        description: z.string().describe('What the field holds, as the agent is told.'),
        allowedValues: z.array(z.string()).optional().describe('enum fields only.'),
      }),
    )
    .describe('What the agent fills from a conversation.'),
  dictionaryIds: z.array(z.string()).describe('Dictionaries the agent uses, in order.'),
  backgroundAudioId: z.string().nullable().describe('A background audio asset id; null: silence.'),
  backgroundAudioPlayback: z
    .object({
      telnyx: z
        .literal(BACKGROUND_AUDIO_PLAYBACK.telnyx)
        .describe(
          "not_supported: Telnyx's playback_start mixes a file only over another file playing (overlay), never under the conversation's speech; Telnyx calls are placed without it.",
        ),
      twilio: z
        .literal(BACKGROUND_AUDIO_PLAYBACK.twilio)
        .describe(
          "not_supported: Twilio's ConversationRelay plays audio in turn with its speech, never under it; Twilio calls are placed without it.",
        ),
    })
    .nullable()
    .describe(
      "Read-only: whether backgroundAudioId is played under calls, per carrier: on neither today, as neither carrier's call protocol the product uses mixes a file under the agent's speech (docs/features/background-audio.md#on-a-call); the asset is stored, previewed and referenced only. Null when the agent has none. Simulated calls play no audio.",
    ),
  voicemailMessage: z
    .string()
    .nullable()
    .describe(
      'Left on an answering machine after its beep ({{name}} and lead fields filled); the call ends voicemail_left. null: none.',
    ),
  instructions: z.string().nullable().describe("A model's instructions (its prompt); null: the script engine."),
  firstMessage: z.string().nullable().describe('Said first in a conversation, after the opening line; null: none.'),
  transferNumber: z.string().nullable().describe('Where transfer_to_human hands a call (E.164); null: no transfer.'),
  transferMode: z
    .enum(TRANSFER_MODES)
    .describe(
      "cold: the human hears the lead at once; warm: the human's leg first hears a summary of the call, then the lead is bridged.",
    ),
  conversationEngine: z
    .enum(CONVERSATION_ENGINES)
    .describe(
      "How the agent's answered carrier calls talk: relay, the dialogue engine over ConversationRelay (the default); " +
        "gather, the script walk on the carrier's speech recognition (also for every agent when the deployment says gather).",
    ),
  documentIds: z
    .array(z.string())
    .describe(
      'Knowledge-base documents linked to the agent (oldest link first); changed through PUT /agents/{id}/documents (knowledge.edit).',
    ),
  createdAt: z.string().describe('ISO 8601 date-time.'),
  updatedAt: z
    .string()
    .describe('ISO 8601 date-time of the last change, links to dictionaries and documents included.'),
});

const agentDocumentSchema = z.object({
  id: z.string().uuid().describe('The document id.'),
  knowledgeBaseId: z.string().uuid().describe('The knowledge base the document belongs to.'),
  title: z.string().describe('The document title.'),
  format: z.string().describe('text or markdown.'),
  charCount: z.number().int().describe('Characters of the document, as its knowledge base counts them.'),
  linkedAt: z.string().describe('When the document was linked to this agent.'),
});

const agentParams = z.object({ id: z.string() });
const INVALID_REFERENCES =
  'A dictionary, background audio or voice that is not the workspace’s (or unknown) is 400 invalid_body naming the field; so is a voice that does not speak the agent’s language (docs/features/agents.md#voice-and-language); nothing changes.';

export const agentRoutes = [
  defineRoute({
    method: 'get',
    path: '/agents',
    access: { permission: 'agents.view' },
    summary: "The workspace's agents, all at once (unpaginated, newest first). Deleted agents are not listed.",
    tags: ['Agents'],
    responses: { 200: { description: 'Every agent of the workspace.', schema: z.array(agentSchema) } },
    handler: async ({ services, principal }) => ({ status: 200, body: await listAgents(services, principal) }),
  }),
  defineRoute({
    method: 'post',
    path: '/agents',
    access: { permission: 'agents.edit' },
    summary: `Create an agent. ${INVALID_REFERENCES}`,
    tags: ['Agents'],
    body: newAgentSchema,
    responses: { 201: { description: 'Created.', schema: agentSchema } },
    errors: { 409: [ErrorCode.agent_limit_reached] },
    handler: async ({ services, principal, body }) => ({
      status: 201,
      body: await createAgent(services, principal, body),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/agents/{id}',
    access: { permission: 'agents.view' },
    summary: 'Read one agent. A deleted agent is 403 forbidden, like an unknown one.',
    tags: ['Agents'],
    params: agentParams,
    responses: { 200: { description: 'The agent.', schema: agentSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await getAgent(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/agents/{id}',
    access: { permission: 'agents.edit' },
    summary: `Change some settings of an agent; each one given is replaced whole (script, extractionFields, dictionaryIds). ${INVALID_REFERENCES}`,
    tags: ['Agents'],
    params: agentParams,
    body: agentUpdateSchema,
    responses: { 200: { description: 'The agent.', schema: agentSchema } },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: await updateAgent(services, principal, params.id, body),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/agents/{id}',
    access: { permission: 'agents.delete' },
    summary:
      'Delete an agent: it is gone from the API (campaigns that named it keep the id). Refused with 409 agent_in_use, ' +
      'naming campaignIds (RUNNING or PAUSED campaigns using it) and phoneNumberIds (numbers routing inbound calls to it), while anything uses it.',
    tags: ['Agents'],
    params: agentParams,
    responses: { 204: { description: 'Deleted.' } },
    errors: { 409: [ErrorCode.agent_in_use] },
    handler: async ({ services, principal, params }) => {
      await deleteAgent(services, principal, params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/agents/{id}/documents',
    access: { permission: 'knowledge.view' },
    summary: 'The knowledge-base documents linked to an agent, all at once (oldest link first).',
    tags: ['Agent documents'],
    params: agentParams,
    responses: { 200: { description: 'The linked documents.', schema: z.array(agentDocumentSchema) } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await listAgentDocuments(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'put',
    path: '/agents/{id}/documents',
    access: { permission: 'knowledge.edit' },
    summary:
      'Replace the set of documents linked to an agent (links kept keep their linkedAt). ' +
      'An id that is not a document of the workspace is 400 invalid_body naming it; nothing changes.',
    tags: ['Agent documents'],
    params: agentParams,
    body: z.strictObject({ documentIds: documentIdsSchema }),
    responses: { 200: { description: 'The linked documents.', schema: z.array(agentDocumentSchema) } },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: await replaceAgentDocuments(services, principal, params.id, body.documentIds),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/agents/{id}/documents/{docId}',
    access: { permission: 'knowledge.delete' },
    summary:
      'Unlink a document from an agent (the document stays in its knowledge base). A document of the workspace that is not linked: 204 all the same.',
    tags: ['Agent documents'],
    params: z.object({ id: z.string(), docId: z.string().describe('A document id of the workspace.') }),
    responses: { 204: { description: 'Unlinked.' } },
    handler: async ({ services, principal, params }) => {
      await unlinkAgentDocument(services, principal, params.id, params.docId);
      return { status: 204 };
    },
  }),
];
