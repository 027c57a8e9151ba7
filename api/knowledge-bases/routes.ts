import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { ErrorCode } from '../../lib/error-codes';
import { defineRoute } from '../http/route';
import {
  DOCUMENT_FORMATS,
  MAX_DOCUMENT_CHARACTERS,
  MAX_DOCUMENTS_PER_KNOWLEDGE_BASE,
  MAX_KNOWLEDGE_BASES_PER_WORKSPACE,
  addDocument,
  createKnowledgeBase,
  deleteDocument,
  deleteKnowledgeBase,
  getDocument,
  getKnowledgeBase,
  listDocuments,
  listKnowledgeBases,
  updateKnowledgeBase,
} from './knowledge-bases';

// Scope area: the spec's Chatbots area covers "Chatbots, knowledge bases, conversation logs".
const VIEW = { permission: 'chatbots.view' } as const;
const EDIT = { permission: 'chatbots.edit' } as const;
const tags = ['Knowledge bases'];

const knowledgeBaseFields = {
  name: z
    .string()
    .trim()
    .min(1)
    .check(atMostCodePoints(200))
    .describe('What the knowledge base is about, 1 to 200 characters.'),
  description: z
    .string()
    .trim()
    .check(atMostCodePoints(2000))
    .describe('Free text, up to 2,000 characters; "" when none.'),
};

const createdAt = z.string().describe('ISO 8601 instant it was created.');
const updatedAt = z.string().describe('ISO 8601 instant it was last changed.');

const knowledgeBaseSchema = z.object({
  id: z.string().uuid().describe('The knowledge base id.'),
  name: z.string().describe('What the knowledge base is about.'),
  description: z.string().describe('Free text; "" when none.'),
  documentCount: z.number().int().describe('How many documents it holds.'),
  createdAt,
  updatedAt,
});

const documentSummarySchema = z.object({
  id: z.string().uuid().describe('The document id.'),
  knowledgeBaseId: z.string().uuid().describe('The knowledge base that holds it.'),
  title: z.string().describe('The title it was given.'),
  format: z.enum(DOCUMENT_FORMATS).describe('How content is written: plain text or Markdown.'),
  charCount: z.number().int().describe('Length of content in Unicode code points (an emoji counts once).'),
  createdAt,
  updatedAt,
});

const documentSchema = documentSummarySchema.extend({
  content: z.string().describe('The text exactly as it was sent (no normalisation).'),
});

const newDocumentSchema = z.strictObject({
  title: z.string().trim().min(1).check(atMostCodePoints(300)).describe('1 to 300 characters.'),
  format: z
    .enum(DOCUMENT_FORMATS)
    .describe('`text` or `markdown`. PDF is not accepted (docs/features/knowledge-bases.md).'),
  content: z
    .string()
    .refine((text) => text.trim().length > 0, 'must hold some text')
    .check(atMostCodePoints(MAX_DOCUMENT_CHARACTERS))
    .describe(
      `The document, stored exactly as sent: 1 to ${MAX_DOCUMENT_CHARACTERS} Unicode code points, not only whitespace (NUL and unpaired surrogates are refused, as everywhere).`,
    ),
});

const baseParams = z.object({ id: z.string().describe('A knowledge base id.') });
const documentParams = baseParams.extend({ docId: z.string().describe('A document id of that knowledge base.') });

export const knowledgeBaseRoutes = [
  defineRoute({
    method: 'get',
    path: '/knowledge-bases',
    access: VIEW,
    summary: "The workspace's knowledge bases, all at once (unpaginated), newest first, each with its documentCount.",
    tags,
    responses: { 200: { description: 'Every knowledge base.', schema: z.array(knowledgeBaseSchema) } },
    handler: async ({ services, principal }) => ({ status: 200, body: await listKnowledgeBases(services, principal) }),
  }),
  defineRoute({
    method: 'post',
    path: '/knowledge-bases',
    access: EDIT,
    summary: `Create a knowledge base (at most ${MAX_KNOWLEDGE_BASES_PER_WORKSPACE} per workspace: 409 knowledge_base_limit_reached).`,
    tags,
    body: z.strictObject({ ...knowledgeBaseFields, description: knowledgeBaseFields.description.default('') }),
    responses: { 201: { description: 'Created.', schema: knowledgeBaseSchema } },
    errors: { 409: [ErrorCode.knowledge_base_limit_reached] },
    handler: async ({ services, principal, body }) => ({
      status: 201,
      body: await createKnowledgeBase(services, principal, body),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/knowledge-bases/{id}',
    access: VIEW,
    summary: 'One knowledge base with its documents listed, newest first, without their content.',
    tags,
    params: baseParams,
    responses: {
      200: {
        description: 'The knowledge base.',
        schema: knowledgeBaseSchema.extend({ documents: z.array(documentSummarySchema) }),
      },
    },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await getKnowledgeBase(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/knowledge-bases/{id}',
    access: EDIT,
    summary: 'Rename a knowledge base or change its description.',
    tags,
    params: baseParams,
    body: z
      .strictObject(knowledgeBaseFields)
      .partial()
      .refine((update) => Object.keys(update).length > 0, { message: 'give at least one field to change' }),
    responses: { 200: { description: 'The knowledge base.', schema: knowledgeBaseSchema } },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: await updateKnowledgeBase(services, principal, params.id, body),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/knowledge-bases/{id}',
    access: { permission: 'chatbots.delete' },
    summary: 'Delete a knowledge base and its documents; every agent stops using them at once.',
    tags,
    params: baseParams,
    responses: { 204: { description: 'Deleted.' } },
    handler: async ({ services, principal, params }) => {
      await deleteKnowledgeBase(services, principal, params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/knowledge-bases/{id}/documents',
    access: VIEW,
    summary: 'The documents of a knowledge base, all at once (unpaginated), newest first, without their content.',
    tags,
    params: baseParams,
    responses: { 200: { description: 'Every document of the base.', schema: z.array(documentSummarySchema) } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await listDocuments(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/knowledge-bases/{id}/documents',
    access: EDIT,
    summary: `Add a text or Markdown document (at most ${MAX_DOCUMENTS_PER_KNOWLEDGE_BASE} per knowledge base: 409 document_limit_reached). Documents are not edited: delete one and add its new version.`,
    tags,
    params: baseParams,
    body: newDocumentSchema,
    responses: { 201: { description: 'Created, with its content.', schema: documentSchema } },
    errors: { 409: [ErrorCode.document_limit_reached] },
    handler: async ({ services, principal, params, body }) => ({
      status: 201,
      body: await addDocument(services, principal, params.id, body),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/knowledge-bases/{id}/documents/{docId}',
    access: VIEW,
    summary: 'One document with its content. A document of another knowledge base is refused like an unknown one.',
    tags,
    params: documentParams,
    responses: { 200: { description: 'The document.', schema: documentSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await getDocument(services, principal, params.id, params.docId),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/knowledge-bases/{id}/documents/{docId}',
    // Spec section 5, stricter scopes for keys: the dashboard permission is chatbots.edit, a key needs chatbots.delete.
    access: { permission: 'chatbots.delete' },
    summary:
      'Delete a document: every agent that used it stops using it at once. A key needs chatbots.delete (dashboard permission: chatbots.edit).',
    tags,
    params: documentParams,
    responses: { 204: { description: 'Deleted.' } },
    handler: async ({ services, principal, params }) => {
      await deleteDocument(services, principal, params.id, params.docId);
      return { status: 204 };
    },
  }),
];
