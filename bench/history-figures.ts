import type { Client } from '@temporalio/client';

// What the histories of a bench's workflows hold: events, workflow tasks and visibility writes, in all and by type
// (bench/bare-ladder.ts, bench/twilio-twin-ladder.ts).

export interface HistoryFigures {
  workflows: number;
  events: number;
  upserts: number;
  visibilityWrites: number;
  workflowTasks: number;
  byType: Record<string, { workflows: number; events: number; upserts: number; workflowTasks: number }>;
}

/** The figures of these workflows' histories: a closed run's visibility writes are its start, its upserts, its close. */
export async function historyFigures(client: Client, workflowIds: string[]): Promise<HistoryFigures> {
  const figures: HistoryFigures = {
    workflows: 0,
    events: 0,
    upserts: 0,
    visibilityWrites: 0,
    workflowTasks: 0,
    byType: {},
  };
  for (let offset = 0; offset < workflowIds.length; offset += 20) {
    const histories = await Promise.all(
      workflowIds.slice(offset, offset + 20).map(async (id) => {
        const handle = client.workflow.getHandle(id);
        const [history, description] = await Promise.all([handle.fetchHistory(), handle.describe()]);
        return { events: history.events ?? [], type: description.type, closed: description.status.name !== 'RUNNING' };
      }),
    );
    for (const { events, type, closed } of histories) {
      const upserts = events.filter((event) => event.upsertWorkflowSearchAttributesEventAttributes).length;
      const workflowTasks = events.filter((event) => event.workflowTaskCompletedEventAttributes).length;
      figures.workflows += 1;
      figures.events += events.length;
      figures.upserts += upserts;
      figures.visibilityWrites += 1 + upserts + (closed ? 1 : 0);
      figures.workflowTasks += workflowTasks;
      const byType = (figures.byType[type] ??= { workflows: 0, events: 0, upserts: 0, workflowTasks: 0 });
      byType.workflows += 1;
      byType.events += events.length;
      byType.upserts += upserts;
      byType.workflowTasks += workflowTasks;
    }
  }
  return figures;
}
