import { getPriority } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { evaluateCall } from '../../lib/call-intelligence/call-evaluation';
import {
  CpuBudgetExceeded,
  createCpuBudget,
  WALL_CEILING_FACTOR,
  type CpuBudget,
} from '../../lib/cpu-budget/cpu-budget';
import { CPU_BUDGET_THREAD_NICE } from '../../lib/cpu-budget/serve';
import { redactTurns } from '../../lib/compliance/redaction';
import { SALES_FIELDS, SALES_SCRIPT, salesConversation } from '../support/call-intelligence';

const STUCK_THREAD = new URL('./stuck-thread.ts', import.meta.url);

const transcript = salesConversation();

/** The main thread's longest pause (ms) while `work` runs, by the event loop's own delay histogram. */
async function longestPause<T>(work: () => Promise<T>): Promise<{ result: PromiseSettledResult<T>; maxMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const [result] = await Promise.allSettled([work()]);
  histogram.disable();
  return { result: result!, maxMs: histogram.max / 1e6 };
}

describe('CPU budget threads', () => {
  it('answer what the function answers in the process', async () => {
    const budget = createCpuBudget({ threads: 2, budgetMs: 5_000 });
    try {
      const input = {
        script: SALES_SCRIPT,
        fieldNames: SALES_FIELDS.map((field) => field.name),
        transcript,
        extracted: { seats: 25 },
        answeredBy: 'human',
        durationMs: 41_000,
      };
      expect(await budget.run('evaluateCall', input)).toEqual(evaluateCall(input));
      const settings = { redactions: ['card_number' as const, 'email_address' as const] };
      const turns = [{ speaker: 'lead' as const, text: 'card 4111 1111 1111 1111, mail a@b.co', offsetMs: 0 }];
      const redacted = await budget.run('redactTurns', { turns, settings });
      expect(redacted).toEqual(redactTurns(turns, settings));
      expect(redacted[0]!.text).not.toContain('4111');
    } finally {
      await budget.close();
    }
  });

  it('stop a step at its budget without pausing the main thread, and a fresh thread takes the next', async () => {
    const budget: CpuBudget = createCpuBudget({ threads: 1, budgetMs: 300, threadFile: STUCK_THREAD });
    try {
      // Loaded once, so that the pause measured below is the step's alone.
      expect(await budget.run('probe' as 'evaluateCall', undefined as never)).toBe('fresh');
      const { result, maxMs } = await longestPause(() =>
        budget.run('extractByRules', { fields: SALES_FIELDS, transcript }),
      );
      expect(result.status).toBe('rejected');
      const reason = (result as PromiseRejectedResult).reason as unknown;
      expect(reason).toBeInstanceOf(CpuBudgetExceeded);
      expect(reason).toMatchObject({ task: 'extractByRules', budgetMs: 300 });
      // The step spun for its whole 300 ms budget; on the main thread that was a 300 ms pause (and, with the old
      // catastrophic matcher, seconds). Here the loop never stops for long: 100 ms allows a loaded 2-CPU machine.
      expect(maxMs, 'the longest pause of the main thread').toBeLessThan(100);
      // The spun thread was terminated; the next step is answered by a new one.
      expect(await budget.run('probe' as 'evaluateCall', undefined as never)).toBe('fresh');
    } finally {
      await budget.close();
    }
  });

  it('queue steps beyond its threads, each with its own budget', async () => {
    const budget = createCpuBudget({ threads: 1, budgetMs: 200, threadFile: STUCK_THREAD });
    try {
      const results = await Promise.allSettled([
        budget.run('evaluateCall', {} as never),
        budget.run('redactTurns', {} as never),
        budget.run('probe' as 'evaluateCall', undefined as never),
      ]);
      expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
      expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ task: 'redactTurns', budgetMs: 200 });
    } finally {
      await budget.close();
    }
  });

  it.runIf(process.platform === 'linux')(
    "run at the lowest priority, the process's own threads untouched, so that a tenant's steps take only spare CPU",
    async () => {
      const budget = createCpuBudget({ threads: 1, budgetMs: 5_000, threadFile: STUCK_THREAD });
      try {
        expect(await budget.run('priority' as 'evaluateCall', undefined as never)).toBe(CPU_BUDGET_THREAD_NICE);
        expect(getPriority(), "the process's main thread").toBe(0);
      } finally {
        await budget.close();
      }
    },
  );

  it.runIf(process.platform === 'linux')(
    "count a step's own CPU time, not the time it waits, up to a wall-time ceiling",
    async () => {
      const budgetMs = 100;
      const budget = createCpuBudget({ threads: 1, budgetMs, threadFile: STUCK_THREAD });
      const wait = (ms: number) => budget.run('wait' as 'evaluateCall', ms as never);
      try {
        // Three budgets of waiting use next to no CPU: a step the machine kept waiting is not over its budget.
        expect(await wait(3 * budgetMs)).toBe('woke');
        // Past the ceiling it is stopped all the same.
        await expect(wait(3 * WALL_CEILING_FACTOR * budgetMs)).rejects.toBeInstanceOf(CpuBudgetExceeded);
      } finally {
        await budget.close();
      }
    },
  );
});
