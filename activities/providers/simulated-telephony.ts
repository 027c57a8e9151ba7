import { createHash } from 'node:crypto';
import type { CallOutcome, DialRequest, DialResult, Telephony } from './telephony';

/**
 * `simulated` telephony: no call leaves the machine. The outcome is a pure function of the number's
 * last digit, so tests and demos can script every path of the dial ladder:
 *   0-4 answered, 5 busy, 6 no_answer, 7 voicemail, 8 failed, 9 invalid_number.
 * An answered call lasts 30 s plus 1 s per unit of the second-to-last digit; other outcomes last 0 ms.
 */
export function createSimulatedTelephony(): Telephony {
  return {
    name: 'simulated',
    async dial(request: DialRequest): Promise<DialResult> {
      const outcome = simulatedOutcomeFor(request.to);
      const digits = request.to.replace(/\D/g, '');
      const tens = Number(digits.at(-2) ?? 0);
      return {
        providerCallId: `sim_${createHash('sha256').update(request.idempotencyKey).digest('hex').slice(0, 24)}`,
        outcome,
        durationMs: outcome === 'answered' ? 30_000 + tens * 1_000 : 0,
      };
    },
  };
}

const OUTCOME_BY_LAST_DIGIT: readonly CallOutcome[] = [
  'answered', 'answered', 'answered', 'answered', 'answered', 'busy', 'no_answer', 'voicemail', 'failed', 'invalid_number',
];

export function simulatedOutcomeFor(phone: string): CallOutcome {
  const lastDigit = Number(phone.replace(/\D/g, '').at(-1) ?? 0);
  return OUTCOME_BY_LAST_DIGIT[lastDigit]!;
}
