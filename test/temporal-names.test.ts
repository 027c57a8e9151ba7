import { describe, expect, it } from 'vitest';
import { JourneyRunStatus } from '../generated/prisma/enums';
import { FINAL_RUN_STATUSES, JOURNEY_RUN_STATUSES, LIVE_RUN_STATUSES } from '../lib/journeys/run-statuses';
import * as workflowIds from '../lib/temporal/workflow-ids';

describe('the one list of journey run statuses', () => {
  it("is the JourneyRun table's enum, and every status is either final or live", () => {
    expect([...JOURNEY_RUN_STATUSES].sort()).toEqual(Object.values(JourneyRunStatus).sort());
    expect([...FINAL_RUN_STATUSES, ...LIVE_RUN_STATUSES].sort()).toEqual([...JOURNEY_RUN_STATUSES].sort());
  });
});

describe('lib/temporal/workflow-ids.ts', () => {
  const id = '3f1c2a9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b';

  it('gives every kind of workflow its own prefix, so that no two kinds can ever share an id', () => {
    const made = Object.values(workflowIds).map((makeId) => makeId(id, 'key'));
    const prefixes = made.map((workflowId) => workflowId.slice(0, workflowId.indexOf(id)));
    expect(new Set(prefixes).size).toBe(made.length);
    // No prefix is the start of another (e.g. "export-" and "export-job-").
    for (const prefix of prefixes) expect(prefixes.filter((other) => other.startsWith(prefix))).toEqual([prefix]);
  });

  it("makes a lead's id from campaign and key alone: the same pair always, a different pair never", () => {
    expect(workflowIds.leadWorkflowId(id, 'order-1')).toBe(workflowIds.leadWorkflowId(id, 'order-1'));
    expect(workflowIds.leadWorkflowId(id, 'order-1')).not.toBe(workflowIds.leadWorkflowId(id, 'order-2'));
    // The key's digest, URL-safe and unpadded, as recorded in the ids of leads already in flight.
    expect(workflowIds.leadWorkflowId(id, 'contact:x')).toBe(`lead-${id}-mnPREi8bCYnHdHYHT7g2TaeGo2J1qvoOiC65dRbHok8`);
  });
});
