import type { Prisma } from '../../generated/prisma/client';
import type { AppServices } from '../app-services';

/** The background audio API's SQL (docs/features/background-audio.md): the workspace's uploads. */

type Db = AppServices['db'];
type OwnedWhere = { id: string; workspaceId: string };

/** The workspace's uploads, oldest first, never their audio. */
export async function uploadsOfWorkspace(db: Db, workspaceId: string) {
  return db.backgroundAudio.findMany({
    where: { workspaceId },
    select: { id: true, slug: true, label: true, durationSecs: true },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

export async function uploadCount(tx: Prisma.TransactionClient, workspaceId: string): Promise<number> {
  return tx.backgroundAudio.count({ where: { workspaceId } });
}

/** Answers the upload as listed, never its audio. */
export async function insertUpload(tx: Prisma.TransactionClient, data: Prisma.BackgroundAudioUncheckedCreateInput) {
  return tx.backgroundAudio.create({
    data,
    select: { id: true, slug: true, label: true, durationSecs: true },
  });
}

export async function uploadIdWhere(db: Db, where: OwnedWhere) {
  return db.backgroundAudio.findFirst({ where, select: { id: true } });
}

export async function uploadAudioWhere(db: Db, where: OwnedWhere) {
  return db.backgroundAudio.findFirst({ where, select: { audio: true, mediaType: true } });
}

/**
 * The upload is deleted and its agents set to none, in one transaction. The row goes first: its delete waits for any
 * agent write that holds it FOR KEY SHARE (an agent being set to it, api/agents/agent-references.ts) and then sees that
 * agent in the UPDATE (read committed); an agent write after it finds no row and is refused. deleteMany: a concurrent
 * delete between the caller's read and this transaction leaves it gone, as asked.
 */
export async function deleteUpload(db: Db, workspaceId: string, id: string): Promise<void> {
  await db.$transaction([
    db.backgroundAudio.deleteMany({ where: { id, workspaceId } }),
    db.agent.updateMany({
      where: { workspaceId, backgroundAudioId: id },
      data: { backgroundAudioId: null },
    }),
  ]);
}
