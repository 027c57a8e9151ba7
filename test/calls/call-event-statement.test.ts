import { describe, expect, it } from 'vitest';
import { applyCallEvent } from '../../lib/calls/call-end';
import { poolSql, prismaSql } from '../../lib/run-sql';

// The event endpoint runs applyCallEvent on a pg pool with a named statement (parsed and planned once per
// connection: docs/benchmarks/intake.md); Prisma, which reconciliation uses, gets its text.
describe('the call event statement', () => {
  const event = {
    eventId: 'e1',
    providerCallId: 'sim_1',
    status: 'ringing' as const,
    occurredAt: '2026-11-27T00:00:00.000Z',
  };

  it('is named on a pg pool, one statement for both lookups, the events as one JSON parameter', async () => {
    const sent: unknown[] = [];
    const pool = {
      query: async (config: unknown, values?: unknown[]) => {
        sent.push(values === undefined ? config : { text: config, values });
        return { rows: [] } as never;
      },
    };
    expect(await applyCallEvent(poolSql(pool), 'simulated', { ...event, attemptId: 'a:1' })).toEqual({ found: false });
    await applyCallEvent(poolSql(pool), 'simulated', event);
    await applyCallEvent(poolSql(pool), 'simulated', { ...event, status: 'completed', durationMs: 1_000 });
    const [byAttempt, byCallId, terminal] = sent as Array<{ name?: string; text: string; values: unknown[] }>;
    // Progress events end no call: their statement leaves the line hand-over out.
    expect(byAttempt!.name).toBe('apply_call_progress_events');
    expect(byCallId!.name).toBe('apply_call_progress_events');
    expect(byAttempt!.text).not.toContain('"LineQueue"');
    expect(terminal!.name).toBe('apply_call_events');
    expect(terminal!.text).toContain('"LineQueue"');
    expect(byAttempt!.values).toHaveLength(1);
    expect(JSON.parse(byAttempt!.values[0] as string)).toMatchObject([
      { provider: 'simulated', providerCallId: 'sim_1', attemptId: 'a:1', rank: 2, eventId: 'e1', terminal: false },
    ]);
    expect(JSON.parse(byCallId!.values[0] as string)).toMatchObject([{ providerCallId: 'sim_1', attemptId: null }]);
    expect(JSON.parse(terminal!.values[0] as string)).toMatchObject([
      {
        status: 'completed',
        terminal: true,
        durationMs: 1_000,
        outcomeIfHuman: 'answered',
        outcomeIfMachine: 'voicemail',
      },
    ]);
  });

  it('is sent to Prisma as its text', async () => {
    const texts: string[] = [];
    const db = {
      $queryRawUnsafe: async (text: string) => {
        texts.push(text);
        return [];
      },
    };
    await applyCallEvent(prismaSql(db as never), 'simulated', { ...event, attemptId: 'a:1' });
    expect(texts).toHaveLength(1);
    expect(texts[0]).toContain('INSERT INTO "CallEvent"');
  });
});
