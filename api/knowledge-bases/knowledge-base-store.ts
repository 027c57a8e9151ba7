import type { Prisma } from '../../generated/prisma/client';
import type { AppServices } from '../app-services';

/**
 * The knowledge bases API's SQL (docs/features/knowledge-bases.md): bases and their documents as the API reads and
 * writes them; what a call searches is lib/knowledge/knowledge-store.ts. `where` is findOwned's (api/http/owned.ts).
 */

type Db = AppServices['db'];
type Tx = Prisma.TransactionClient;
type OwnedWhere = { id: string; workspaceId: string };

const withDocumentCount = { _count: { select: { documents: true } } } as const;

export async function knowledgeBasesOfWorkspace(db: Db, workspaceId: string) {
  return db.knowledgeBase.findMany({
    where: { workspaceId },
    include: withDocumentCount,
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
  });
}

export async function knowledgeBaseWhere(db: Db, where: OwnedWhere) {
  return db.knowledgeBase.findFirst({ where, include: withDocumentCount });
}

export async function knowledgeBaseCount(tx: Tx, workspaceId: string): Promise<number> {
  return tx.knowledgeBase.count({ where: { workspaceId } });
}

export async function insertKnowledgeBase(tx: Tx, workspaceId: string, input: { name: string; description?: string }) {
  return tx.knowledgeBase.create({ data: { ...input, workspaceId }, include: withDocumentCount });
}

export async function updateKnowledgeBaseRow(db: Db, id: string, input: { name?: string; description?: string }) {
  return db.knowledgeBase.update({ where: { id }, data: input, include: withDocumentCount });
}

export async function deleteKnowledgeBaseRow(db: Db, workspaceId: string, id: string): Promise<void> {
  await db.knowledgeBase.deleteMany({ where: { id, workspaceId } });
}

/** The base's documents without their content, newest first. */
export async function documentSummariesOf(db: Db, knowledgeBaseId: string) {
  return db.knowledgeDocument.findMany({
    where: { knowledgeBaseId },
    omit: { content: true },
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
  });
}

/** The base's row, locked for the transaction: additions to it take turns, and it is not deleted meanwhile. */
export async function lockKnowledgeBase(tx: Tx, where: OwnedWhere): Promise<{ id: string } | undefined> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM "KnowledgeBase" WHERE id = ${where.id}::uuid AND "workspaceId" = ${where.workspaceId}::uuid FOR UPDATE`;
  return rows[0];
}

export async function documentCountOf(tx: Tx, knowledgeBaseId: string): Promise<number> {
  return tx.knowledgeDocument.count({ where: { knowledgeBaseId } });
}

export async function insertKnowledgeDocument(tx: Tx, data: Prisma.KnowledgeDocumentUncheckedCreateInput) {
  return tx.knowledgeDocument.create({ data });
}

export async function documentOfBaseWhere(db: Db, where: OwnedWhere, knowledgeBaseId: string) {
  return db.knowledgeDocument.findFirst({ where: { ...where, knowledgeBaseId } });
}

export async function deleteKnowledgeDocumentRow(db: Db, workspaceId: string, id: string): Promise<void> {
  await db.knowledgeDocument.deleteMany({ where: { id, workspaceId } });
}
