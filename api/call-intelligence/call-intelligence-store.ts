import type { AppServices } from '../app-services';

/** The call intelligence API's SQL (docs/features/call-intelligence.md). */

/** The call's id and transcript; `where` is findOwned's (api/http/owned.ts). */
export async function callTranscriptWhere(db: AppServices['db'], where: { id: string; workspaceId: string }) {
  return db.call.findFirst({ where, select: { id: true, transcript: true } });
}
