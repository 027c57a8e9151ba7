import { describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { createLeadDispatcher } from '../../lib/temporal/lead-dispatch';
import type { StoredLead } from '../../lib/temporal/start-lead-workflow';
import type { SqlPool } from '../../lib/sql-pool';

const lead: StoredLead = {
  id: '00000000-0000-4000-8000-000000000001',
  workflowId: 'lead-test-1',
  campaignId: '00000000-0000-4000-8000-000000000002',
  workspaceId: '00000000-0000-4000-8000-000000000003',
  kind: 'WHATSAPP',
};

/**
 * A pool whose mark of the immediately started leads waits until `releaseMarks` (as behind a sweep's row
 * locks, or a slow database), or fails when `marksFail`; the sweep's claim answers the lead, unmarked.
 */
function fakes(options: { marksFail?: boolean } = {}) {
  const starts: string[] = [];
  let releaseMarks!: () => void;
  const marksReleased = new Promise<void>((resolve) => (releaseMarks = resolve));
  const marked: string[][] = [];
  const temporal = {
    connection: { withDeadline: (_deadline: number, fn: () => Promise<unknown>) => fn() },
    workflow: {
      start: async (_type: string, options: { workflowId: string }) => {
        starts.push(options.workflowId);
        return {};
      },
    },
  } as unknown as Client;
  const client = {
    query: async (query: string | { name?: string }) => {
      if (typeof query === 'object' && query.name === 'claim_undispatched_leads') return { rows: [lead] };
      return { rows: [] };
    },
    release: () => {},
  };
  const sql = {
    connect: async () => client,
    query: async (query: { name?: string; values?: unknown[] }) => {
      if (query.name === 'mark_leads_started') {
        await marksReleased;
        if (options.marksFail) throw new Error('database away');
        marked.push(query.values![0] as string[]);
      }
      return { rows: [] };
    },
  } as unknown as SqlPool;
  return {
    starts,
    marked,
    releaseMarks,
    dispatcher: createLeadDispatcher({ sql, temporal, taskQueue: 'q', staleAfterMs: 0 }),
  };
}

// Longer than the marks' coalescing (MARK_COALESCE_MS, 25 ms in lib/temporal/lead-dispatch.ts).
const settle = () => new Promise((resolve) => setTimeout(resolve, 60));

describe('the lead outbox sweep', () => {
  it('leaves alone a lead started right after its answer whose mark is not committed yet', async () => {
    const { starts, marked, releaseMarks, dispatcher } = fakes();
    dispatcher.dispatchSoon([lead]);
    await settle();
    expect(starts).toEqual([lead.workflowId]);
    // The mark waits; the sweep claims the row (still unmarked) and must not start it again.
    expect(await dispatcher.sweepOnce()).toBe(0);
    expect(starts).toEqual([lead.workflowId]);
    releaseMarks();
    await settle();
    expect(marked).toEqual([[lead.id]]);
    await dispatcher.stop();
  });

  it('takes the lead over once its mark has failed', async () => {
    const { starts, releaseMarks, dispatcher } = fakes({ marksFail: true });
    dispatcher.dispatchSoon([lead]);
    await settle();
    releaseMarks();
    await settle();
    // The mark is lost: the row still has no workflowStartedAt, so the sweep starts it (Temporal refuses a duplicate).
    expect(await dispatcher.sweepOnce()).toBe(1);
    expect(starts).toEqual([lead.workflowId, lead.workflowId]);
    await dispatcher.stop();
  });
});
