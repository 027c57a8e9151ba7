import type { Prisma } from '../../generated/prisma/client';
import type { AppServices } from '../app-services';

/** The translations API's SQL (docs/features/translations.md): a call's transcript and its stored translations. */

type Db = AppServices['db'];

/** The call's transcript and agent; `where` is findOwned's (api/http/owned.ts). */
export async function callTranscriptWhere(db: Db, where: { id: string; workspaceId: string }) {
  return db.call.findFirst({ where, select: { id: true, transcript: true, agentId: true } });
}

export async function storedTranslation(db: Db, callId: string, language: string) {
  return db.callTranslation.findUnique({ where: { callId_language: { callId, language } } });
}

/** Stored unless a translation into its language is stored already (that one is kept). */
export async function insertTranslationOnce(db: Db, translation: Prisma.CallTranslationCreateManyInput): Promise<void> {
  await db.callTranslation.createMany({ data: [translation], skipDuplicates: true });
}

/** The agent's language (a deleted agent keeps its own), or null. */
export async function agentLanguage(db: Db, agentId: string) {
  return db.agent.findUnique({ where: { id: agentId }, select: { language: true } });
}
