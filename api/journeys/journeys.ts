import type { Journey } from '../../generated/prisma/client';
import type { Database } from '../../lib/database';
import { ErrorCode } from '../../lib/error-codes';
import { buildCatalog, validateJourney, type JourneyDefinition, type VariableCatalog } from '../../lib/journeys';
import { Refusal, forbidden } from '../../lib/refusal';
import { isUuid } from '../../lib/uuid';

/** A definition whose graph breaks a rule: 422 workflow_invalid (the spec's code), details naming the nodes. */
function journeyInvalid(details: string[]) {
  return new Refusal(ErrorCode.workflow_invalid, { details });
}

/** The catalog of a valid definition; a graph error is refused with every message at once. */
export function variableCatalog(definition: JourneyDefinition): VariableCatalog {
  const details = validateJourney(definition);
  if (details.length) throw journeyInvalid(details);
  return buildCatalog(definition);
}

/** A journey of the workspace; an unknown id and another workspace's both answer 403 forbidden, as for campaigns. */
export async function findOwnedJourney(db: Database, workspaceId: string, id: string): Promise<Journey> {
  const journey = isUuid(id) ? await db.journey.findFirst({ where: { id, workspaceId } }) : null;
  if (!journey) throw forbidden();
  return journey;
}

export function listJourneys(db: Database, workspaceId: string): Promise<Journey[]> {
  return db.journey.findMany({ where: { workspaceId }, orderBy: { createdAt: 'asc' } });
}

/**
 * Creates a journey (revision 1) or saves a new revision of one. Every revision is kept as it was
 * saved: runs read the revision they were enrolled into, so saving never changes a run in flight.
 * A draft may break graph rules; publishing may not.
 */
export async function saveJourney(
  db: Database,
  workspaceId: string,
  input: { id?: string; name?: string; definition: JourneyDefinition },
): Promise<Journey> {
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
    if (!current) throw forbidden();
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

/**
 * Call nodes naming an agent (data.agentId) that is not a live agent of the workspace: one problem each.
 * Checked at publishing, as the graph rules are; a draft may name anything.
 */
async function unknownAgentProblems(
  db: Database,
  workspaceId: string,
  definition: JourneyDefinition,
): Promise<string[]> {
  const named = definition.nodes.flatMap((node) => {
    const agentId = node.type === 'call' ? (node.data as { agentId?: unknown } | undefined)?.agentId : undefined;
    return typeof agentId === 'string' ? [{ nodeId: node.id, agentId }] : [];
  });
  if (!named.length) return [];
  const live = await db.agent.findMany({
    where: { id: { in: named.map((node) => node.agentId).filter(isUuid) }, workspaceId, deletedAt: null },
    select: { id: true },
  });
  const liveIds = new Set(live.map((agent) => agent.id));
  return named
    .filter((node) => !liveIds.has(node.agentId))
    .map((node) => `node "${node.nodeId}": agentId "${node.agentId}" is not an agent of this workspace`);
}

/** Makes the latest revision (or the given one) the one new JOURNEY leads are enrolled into. */
export async function publishJourney(
  db: Database,
  workspaceId: string,
  id: string,
  revision?: number,
): Promise<Journey> {
  const journey = await findOwnedJourney(db, workspaceId, id);
  const chosen = revision ?? journey.revision;
  const saved = await db.journeyRevision.findUnique({
    where: { journeyId_revision: { journeyId: id, revision: chosen } },
  });
  if (!saved) throw new Refusal(ErrorCode.not_found, { detail: `revision ${chosen} does not exist` });
  const definition = saved.definition as unknown as JourneyDefinition;
  const details = validateJourney(definition);
  if (!details.length) details.push(...(await unknownAgentProblems(db, workspaceId, definition)));
  if (details.length) throw journeyInvalid(details);
  return db.journey.update({ where: { id }, data: { status: 'PUBLISHED', publishedRevision: chosen } });
}

/** The spec's workflow object, plus the revision JOURNEY campaigns run. */
export function journeyView(journey: Journey) {
  return {
    id: journey.id,
    name: journey.name,
    status: journey.status,
    revision: journey.revision,
    publishedRevision: journey.publishedRevision,
    updatedAt: journey.updatedAt.toISOString(),
  };
}
