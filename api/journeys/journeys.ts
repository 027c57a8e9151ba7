import type { Journey } from '../../generated/prisma/client';
import type { Database } from '../../lib/database';
import { ErrorCode } from '../../lib/error-codes';
import { buildCatalog, validateJourney, type JourneyDefinition, type VariableCatalog } from '../../lib/journeys';
import { Refusal, forbidden } from '../../lib/refusal';
import { isUuid } from '../../lib/uuid';
import {
  journeyOfWorkspace,
  journeyRevisionOf,
  journeysOfWorkspace,
  liveAgentIds,
  markJourneyPublished,
  saveJourneyRevision,
} from './journey-store';

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
  const journey = isUuid(id) ? await journeyOfWorkspace(db, workspaceId, id) : null;
  if (!journey) throw forbidden();
  return journey;
}

export function listJourneys(db: Database, workspaceId: string): Promise<Journey[]> {
  return journeysOfWorkspace(db, workspaceId);
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
  const saved = await saveJourneyRevision(db, workspaceId, input);
  if (!saved) throw forbidden();
  return saved;
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
  const liveIds = await liveAgentIds(db, workspaceId, named.map((node) => node.agentId).filter(isUuid));
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
  const saved = await journeyRevisionOf(db, id, chosen);
  if (!saved) throw new Refusal(ErrorCode.not_found, { detail: `revision ${chosen} does not exist` });
  const definition = saved.definition as unknown as JourneyDefinition;
  const details = validateJourney(definition);
  if (!details.length) details.push(...(await unknownAgentProblems(db, workspaceId, definition)));
  if (details.length) throw journeyInvalid(details);
  return markJourneyPublished(db, id, chosen);
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
