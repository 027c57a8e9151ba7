import { ZodError, type z } from 'zod';
import type { Prisma } from '../../generated/prisma/client';
import { backgroundAudioReference } from '../../lib/agents/agent-definition';
import { lockedRowsOf, type ReferencedTable } from './agent-store';

type Issue = z.core.$ZodIssue;

/** One issue per id that is not a row of the workspace, at its index: 400 invalid_body names each. */
export async function missingRowIssues(
  tx: Prisma.TransactionClient,
  table: ReferencedTable,
  workspaceId: string,
  field: string,
  ids: readonly string[] | undefined,
  what: string,
): Promise<Issue[]> {
  if (!ids) return [];
  const found = await lockedRowsOf(tx, table, workspaceId, ids);
  return ids.flatMap((id, index) =>
    found.has(id)
      ? []
      : [
          {
            code: 'custom' as const,
            path: [field, index],
            message: `no ${what} of this workspace has this id`,
            input: id,
          },
        ],
  );
}

/**
 * The dictionaries and background audio an agent's settings name must be the workspace's (or a platform
 * asset): checked and locked in the transaction that writes the agent, so nothing changes when one is not.
 */
export async function checkAgentReferences(
  tx: Prisma.TransactionClient,
  workspaceId: string,
  settings: { dictionaryIds?: string[]; backgroundAudioId?: string | null },
): Promise<void> {
  const issues = await missingRowIssues(
    tx,
    'Dictionary',
    workspaceId,
    'dictionaryIds',
    settings.dictionaryIds,
    'dictionary',
  );
  if (settings.backgroundAudioId) {
    const reference = backgroundAudioReference(settings.backgroundAudioId);
    const found =
      reference &&
      ('platform' in reference ||
        (await lockedRowsOf(tx, 'BackgroundAudio', workspaceId, [reference.uploadId])).has(reference.uploadId));
    if (!found)
      issues.push({
        code: 'custom',
        path: ['backgroundAudioId'],
        message: 'no background audio of GET /background-audio has this id',
        input: settings.backgroundAudioId,
      });
  }
  if (issues.length) throw new ZodError(issues);
}
