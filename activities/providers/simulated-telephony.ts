import { createHash } from 'node:crypto';
import type { Database } from '../../lib/database';
import type { CallOutcome } from '../../lib/call-outcomes';
import type { DialRequest, DialResult, Telephony } from './telephony';

/**
 * `simulated` telephony: no call leaves the machine. The outcome is a pure function of the number's
 * last digit, so tests and demos can script every path of the dial ladder:
 *   0-4 answered, 5 busy, 6 no_answer, 7 voicemail, 8 failed, 9 invalid_number.
 * An answered call lasts 30 s plus 1 s per unit of the second-to-last digit; other outcomes last 0 ms.
 * Like a carrier's API it keeps its own record of each attempt (table SimulatedProviderCall), so a
 * second dial of one attempt returns the first call and lookup() answers after a worker crash.
 */
export function createSimulatedTelephony(db: Database): Telephony {
  return {
    name: 'simulated',
    async dial({ attemptId, to }: DialRequest): Promise<DialResult> {
      const result = simulatedCall(attemptId, to);
      const row = await db.simulatedProviderCall.upsert({
        where: { attemptId },
        update: {},
        create: { attemptId, to, ...result },
      });
      return { providerCallId: row.providerCallId, outcome: row.outcome as CallOutcome, durationMs: row.durationMs };
    },
    async lookup(attemptId: string): Promise<DialResult | null> {
      const row = await db.simulatedProviderCall.findUnique({ where: { attemptId } });
      return (
        row && { providerCallId: row.providerCallId, outcome: row.outcome as CallOutcome, durationMs: row.durationMs }
      );
    },
  };
}

const OUTCOME_BY_LAST_DIGIT: readonly CallOutcome[] = [
  'answered',
  'answered',
  'answered',
  'answered',
  'answered',
  'busy',
  'no_answer',
  'voicemail',
  'failed',
  'invalid_number',
];

export function simulatedOutcomeFor(phone: string): CallOutcome {
  const lastDigit = Number(phone.replace(/\D/g, '').at(-1) ?? 0);
  return OUTCOME_BY_LAST_DIGIT[lastDigit]!;
}

function simulatedCall(attemptId: string, to: string): DialResult {
  const outcome = simulatedOutcomeFor(to);
  const tens = Number(to.replace(/\D/g, '').at(-2) ?? 0);
  return {
    providerCallId: `sim_${createHash('sha256').update(attemptId).digest('hex').slice(0, 24)}`,
    outcome,
    durationMs: outcome === 'answered' ? 30_000 + tens * 1_000 : 0,
  };
}
