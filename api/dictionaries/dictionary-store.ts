import type { Dictionary, Prisma } from '../../generated/prisma/client';
import type { AppServices } from '../app-services';

/** The dictionaries' SQL (docs/features/dictionaries.md). `where` is findOwned's (api/http/owned.ts). */

type Db = AppServices['db'];
type OwnedWhere = { id: string; workspaceId: string };

export async function dictionaryCount(tx: Prisma.TransactionClient, workspaceId: string): Promise<number> {
  return tx.dictionary.count({ where: { workspaceId } });
}

export async function insertDictionary(tx: Prisma.TransactionClient, data: Prisma.DictionaryUncheckedCreateInput) {
  return tx.dictionary.create({ data });
}

export async function dictionariesOfWorkspace(db: Db, workspaceId: string): Promise<Dictionary[]> {
  return db.dictionary.findMany({
    where: { workspaceId },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
}

export async function dictionaryWhere(db: Db, where: OwnedWhere) {
  return db.dictionary.findFirst({ where });
}

/** One statement, the workspace in its WHERE clause; a row not there is Prisma's P2025. */
export async function updateDictionaryWhere(db: Db, where: OwnedWhere, data: Prisma.DictionaryUncheckedUpdateInput) {
  return db.dictionary.update({ where, data });
}

/** One statement, the workspace in its WHERE clause; a row not there is Prisma's P2025. */
export async function deleteDictionaryWhere(db: Db, where: OwnedWhere) {
  return db.dictionary.delete({ where });
}
