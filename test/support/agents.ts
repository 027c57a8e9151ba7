import type { Prisma } from '../../generated/prisma/client';
import type { Database } from '../../lib/database';

/**
 * An agent row written directly, for tests of what uses agents (the agents API has tests of its own):
 * an English agent with a catalogue voice and a short script, any column overridden.
 */
export function insertAgent(
  db: Database,
  workspaceId: string,
  columns: Partial<Prisma.AgentUncheckedCreateInput> = {},
) {
  return db.agent.create({
    data: {
      workspaceId,
      name: 'Agent',
      language: 'en-US',
      voiceId: 'espeak-ng/en-us',
      script: { openingLine: 'Hello', questions: [], closing: 'Bye' },
      ...columns,
    },
  });
}
