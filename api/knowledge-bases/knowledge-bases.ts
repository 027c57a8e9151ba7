import { ErrorCode } from '../../lib/error-codes';
import type { KnowledgeBase, KnowledgeDocument } from '../../generated/prisma/client';
import { Refusal } from '../../lib/refusal';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { createWithinQuota } from '../campaigns/workspace-quota';
import {
  deleteKnowledgeBaseRow,
  deleteKnowledgeDocumentRow,
  documentCountOf,
  documentOfBaseWhere,
  documentSummariesOf,
  insertKnowledgeBase,
  insertKnowledgeDocument,
  knowledgeBaseCount,
  knowledgeBasesOfWorkspace,
  knowledgeBaseWhere,
  lockKnowledgeBase,
  updateKnowledgeBaseRow,
} from './knowledge-base-store';

/** Knowledge bases a workspace may hold: each is listed whole (unpaginated), so the list stays small. */
export const MAX_KNOWLEDGE_BASES_PER_WORKSPACE = 100;
/** Documents one knowledge base may hold (GET /knowledge-bases/{id}/documents lists them all at once). */
export const MAX_DOCUMENTS_PER_KNOWLEDGE_BASE = 200;
/**
 * Characters (Unicode code points) of one document: 200,000 code points are at most 800 KB of UTF-8, so a
 * document of the longest allowed size in any script fits the spec's 1 MB request body with its JSON around it.
 */
export const MAX_DOCUMENT_CHARACTERS = 200_000;

export const DOCUMENT_FORMATS = ['text', 'markdown'] as const;

export interface KnowledgeBaseInput {
  name: string;
  description?: string;
}

export interface DocumentInput {
  title: string;
  format: (typeof DOCUMENT_FORMATS)[number];
  content: string;
}

/** A document without its content: what lists show. */
export type DocumentSummary = Omit<KnowledgeDocument, 'content'>;

/** Length in Unicode code points: an emoji or a CJK extension character counts once, as a reader counts it. */
export function charCountOf(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function baseView(base: KnowledgeBase & { _count: { documents: number } }) {
  const { _count, workspaceId: _workspace, ...fields } = base;
  return { ...fields, documentCount: _count.documents };
}

function documentView<Document extends DocumentSummary>(document: Document) {
  const { workspaceId: _workspace, ...fields } = document;
  return fields;
}

export async function listKnowledgeBases({ db }: AppServices, principal: Principal) {
  const bases = await knowledgeBasesOfWorkspace(db, principal.workspaceId);
  return bases.map(baseView);
}

function findOwnedBase({ db }: AppServices, principal: Principal, id: string) {
  return findOwned(principal, id, (where) => knowledgeBaseWhere(db, where));
}

export async function getKnowledgeBase(services: AppServices, principal: Principal, id: string) {
  const base = await findOwnedBase(services, principal, id);
  return { ...baseView(base), documents: await listDocumentsOf(services, base.id) };
}

export async function createKnowledgeBase({ db }: AppServices, principal: Principal, input: KnowledgeBaseInput) {
  const { workspaceId } = principal;
  const base = await createWithinQuota(
    db,
    {
      workspaceId,
      noun: 'knowledge bases',
      limit: MAX_KNOWLEDGE_BASES_PER_WORKSPACE,
      code: ErrorCode.knowledge_base_limit_reached,
      count: (tx) => knowledgeBaseCount(tx, workspaceId),
    },
    (tx) => insertKnowledgeBase(tx, workspaceId, input),
  );
  return baseView(base);
}

export async function updateKnowledgeBase(
  services: AppServices,
  principal: Principal,
  id: string,
  input: Partial<KnowledgeBaseInput>,
) {
  const base = await findOwnedBase(services, principal, id);
  return baseView(await updateKnowledgeBaseRow(services.db, base.id, input));
}

/** Its documents go with it, and every agent stops using them in the same statement (foreign keys cascade). */
export async function deleteKnowledgeBase(services: AppServices, principal: Principal, id: string) {
  const base = await findOwnedBase(services, principal, id);
  await deleteKnowledgeBaseRow(services.db, principal.workspaceId, base.id);
}

function listDocumentsOf({ db }: AppServices, knowledgeBaseId: string) {
  return documentSummariesOf(db, knowledgeBaseId).then((documents) => documents.map(documentView));
}

export async function listDocuments(services: AppServices, principal: Principal, knowledgeBaseId: string) {
  const base = await findOwnedBase(services, principal, knowledgeBaseId);
  return listDocumentsOf(services, base.id);
}

export async function addDocument(
  { db }: AppServices,
  principal: Principal,
  knowledgeBaseId: string,
  input: DocumentInput,
) {
  const { workspaceId } = principal;
  const document = await db.$transaction(async (tx) => {
    // The base's row lock serialises additions to it (the limit holds under concurrency) and keeps it from
    // being deleted meanwhile; another workspace's base, or none, is the same 403 as everywhere.
    const locked = await findOwned(principal, knowledgeBaseId, (where) => lockKnowledgeBase(tx, where));
    if ((await documentCountOf(tx, locked.id)) >= MAX_DOCUMENTS_PER_KNOWLEDGE_BASE)
      throw new Refusal(ErrorCode.document_limit_reached, {
        detail: `the knowledge base already holds ${MAX_DOCUMENTS_PER_KNOWLEDGE_BASE} documents, the most it may hold`,
      });
    return insertKnowledgeDocument(tx, {
      ...input,
      charCount: charCountOf(input.content),
      workspaceId,
      knowledgeBaseId: locked.id,
    });
  });
  return documentView(document);
}

/** A document of this base of the caller's workspace; a document of another base is the same 403 as an unknown one. */
async function findOwnedDocument(
  services: AppServices,
  principal: Principal,
  knowledgeBaseId: string,
  documentId: string,
) {
  const base = await findOwnedBase(services, principal, knowledgeBaseId);
  return findOwned(principal, documentId, (where) => documentOfBaseWhere(services.db, where, base.id));
}

export async function getDocument(
  services: AppServices,
  principal: Principal,
  knowledgeBaseId: string,
  documentId: string,
) {
  return documentView(await findOwnedDocument(services, principal, knowledgeBaseId, documentId));
}

/** Every agent that used the document stops using it in the same statement (AgentDocument cascades). */
export async function deleteDocument(
  services: AppServices,
  principal: Principal,
  knowledgeBaseId: string,
  documentId: string,
) {
  const document = await findOwnedDocument(services, principal, knowledgeBaseId, documentId);
  await deleteKnowledgeDocumentRow(services.db, principal.workspaceId, document.id);
}
