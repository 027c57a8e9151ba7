import type { Database } from '../../lib/database';
import type { JourneyDefinition, JourneyEdge, JourneyNode } from '../../lib/journeys';
import { publishJourney, saveJourney } from '../../api/journeys/journeys';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from './ladders';

type NodeSketch = Omit<JourneyNode, 'position' | 'data'> & { data?: Record<string, unknown> };

/** A definition from nodes and edges written as [source, target] or [source, target, sourceHandle]. */
export function journey(
  nodes: NodeSketch[],
  edges: Array<[string, string] | [string, string, string]>,
): JourneyDefinition {
  return {
    definitionVersion: 1,
    nodes: nodes.map((node, index) => ({ ...node, position: { x: index * 200, y: 0 }, data: node.data ?? {} })),
    edges: edges.map(([source, target, sourceHandle], index): JourneyEdge => ({
      id: `e${index + 1}`,
      source,
      target,
      ...(sourceHandle && { sourceHandle }),
    })),
  };
}

/** start → a whatsapp node `notify` sending this template (en_US) with these parameters → end. */
export const notifyingJourney = (templateName: string, parameters: string[], start: Record<string, unknown> = {}) =>
  journey(
    [
      { id: 'start', type: 'start', data: start },
      { id: 'notify', type: 'whatsapp', data: { templateName, language: 'en_US', parameters } },
      { id: 'end', type: 'end' },
    ],
    [
      ['start', 'notify'],
      ['notify', 'end'],
    ],
  );

/** Saves a journey and publishes its first revision, as an operator does with the CLI. */
export async function publishedJourney(
  db: Database,
  workspaceId: string,
  definition: JourneyDefinition,
  name = 'Journey',
) {
  const saved = await saveJourney(db, workspaceId, { name, definition });
  return publishJourney(db, workspaceId, saved.id);
}

/** A running JOURNEY campaign taking pushed leads into the journey's published revision; its call nodes dial once, at any hour. */
export async function runningJourneyCampaign(
  db: Database,
  workspaceId: string,
  definition: JourneyDefinition,
  settings: { maxLiveRuns?: number } = {},
) {
  const published = await publishedJourney(db, workspaceId, definition);
  const campaign = await db.campaign.create({
    data: {
      workspaceId,
      name: 'Journey',
      kind: 'JOURNEY',
      journeyId: published.id,
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder: SINGLE_ATTEMPT,
      callingWindow: ALWAYS_OPEN,
      ...settings,
    },
  });
  return { published, campaign };
}
