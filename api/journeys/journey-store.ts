import type { Journey, JourneyDecision, JourneyRun, Prisma } from '../../generated/prisma/client';
import type { Database } from '../../lib/database';
import type { JourneyDefinition } from '../../lib/journeys';
import type { JourneyRunStatus } from '../../lib/journeys/run-statuses';

/** The journeys' SQL (docs/features/journeys.md): journeys with their saved revisions, and their runs. */

export async function journeyOfWorkspace(db: Database, workspaceId: string, id: string): Promise<Journey | null> {
  return db.journey.findFirst({ where: { id, workspaceId } });
}

export function journeysOfWorkspace(db: Database, workspaceId: string): Promise<Journey[]> {
  return db.journey.findMany({ where: { workspaceId }, orderBy: { createdAt: 'asc' } });
}

/**
 * Creates a journey (revision 1) or saves a new revision of one, in one transaction; null when the journey is not of
 * the workspace (nothing written). Every revision is kept as it was saved.
 */
export async function saveJourneyRevision(
  db: Database,
  workspaceId: string,
  input: { id?: string; name?: string; definition: JourneyDefinition },
): Promise<Journey | null> {
  return db.$transaction(async (tx) => {
    if (!input.id) {
      const created = await tx.journey.create({
        data: { workspaceId, name: input.name ?? 'Untitled journey', definition: input.definition as object },
      });
      await tx.journeyRevision.create({
        data: { journeyId: created.id, revision: 1, definition: input.definition as object },
      });
      return created;
    }
    // The row lock orders concurrent saves: each gets its own revision number.
    const [current] = await tx.$queryRaw<
      { revision: number }[]
    >`SELECT revision FROM "Workflow" WHERE id = ${input.id}::uuid AND "workspaceId" = ${workspaceId}::uuid FOR UPDATE`;
    if (!current) return null;
    const revision = current.revision + 1;
    await tx.journeyRevision.create({
      data: { journeyId: input.id, revision, definition: input.definition as object },
    });
    return tx.journey.update({
      where: { id: input.id },
      data: { revision, definition: input.definition as object, ...(input.name && { name: input.name }) },
    });
  });
}

/** Which of these agents are live agents of the workspace. */
export async function liveAgentIds(db: Database, workspaceId: string, ids: readonly string[]): Promise<Set<string>> {
  const live = await db.agent.findMany({
    where: { id: { in: [...ids] }, workspaceId, deletedAt: null },
    select: { id: true },
  });
  return new Set(live.map((agent) => agent.id));
}

export async function journeyRevisionOf(db: Database, journeyId: string, revision: number) {
  return db.journeyRevision.findUnique({ where: { journeyId_revision: { journeyId, revision } } });
}

/** A revision that exists (a journey's published one). */
export async function savedJourneyRevision(db: Database, journeyId: string, revision: number) {
  return db.journeyRevision.findUniqueOrThrow({ where: { journeyId_revision: { journeyId, revision } } });
}

export async function markJourneyPublished(db: Database, id: string, revision: number): Promise<Journey> {
  return db.journey.update({ where: { id }, data: { status: 'PUBLISHED', publishedRevision: revision } });
}

/** The definitions of these (journey, revision) pairs. */
export async function revisionDefinitions(db: Database, pairs: ReadonlyArray<{ journeyId: string; revision: number }>) {
  return db.journeyRevision.findMany({
    where: { OR: pairs.map(({ journeyId, revision }) => ({ journeyId, revision })) },
    select: { journeyId: true, revision: true, definition: true },
  });
}

/** A page of the journey's runs (of one status, when given), newest first, with the total. */
export async function runsOfJourneyPage(
  db: Database,
  workspaceId: string,
  journeyId: string,
  query: { status?: JourneyRunStatus; limit: number; offset: number },
) {
  const where = { journeyId, workspaceId, ...(query.status && { status: query.status }) };
  const [runs, total] = await Promise.all([
    db.journeyRun.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: query.limit,
      skip: query.offset,
    }),
    db.journeyRun.count({ where }),
  ]);
  return { runs, total };
}

const withDecisions = { decisions: { orderBy: { createdAt: 'asc' } } } as const;

/** The run of this workspace's journey, with its decisions in order, or null. */
export async function runOfJourney(
  db: Database,
  workspaceId: string,
  journeyId: string,
  runId: string,
): Promise<(JourneyRun & { decisions: JourneyDecision[] }) | null> {
  return db.journeyRun.findFirst({
    where: { id: runId, journeyId, workspaceId },
    include: withDecisions,
  });
}

export async function runWithDecisions(db: Database, id: string) {
  return db.journeyRun.findUniqueOrThrow({ where: { id }, include: withDecisions });
}

export async function insertJourneyRun(db: Database, data: Prisma.JourneyRunUncheckedCreateInput) {
  return db.journeyRun.create({ data });
}

export async function deleteJourneyRun(db: Database, id: string): Promise<void> {
  await db.journeyRun.delete({ where: { id } });
}
