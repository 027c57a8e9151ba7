/**
 * Credits are decimals with 4 places, as Workspace.creditBalance and the ledger store them
 * (numeric(14,4)). Code computes in whole ten-thousandths (safe integers) and hands PostgreSQL and the
 * API decimal strings, so no amount is ever a binary float.
 */
export const CREDIT_SCALE = 10_000;
/** The largest magnitude numeric(14,4) holds, in ten-thousandths. */
const MAX_UNITS = 10 ** 14 - 1;

const DECIMAL = /^(-)?(\d{1,10})(?:\.(\d{1,4}))?$/;

/** A decimal amount (string, or a number with at most 4 decimals) in ten-thousandths. */
export function creditUnits(amount: string | number): number {
  if (typeof amount === 'number') {
    const units = Math.round(amount * CREDIT_SCALE);
    if (!Number.isFinite(amount) || Math.abs(units / CREDIT_SCALE - amount) > 1e-9 || Math.abs(units) > MAX_UNITS)
      throw new RangeError(`${amount} is not a credit amount (at most 4 decimals, under 10^10)`);
    return units;
  }
  const match = DECIMAL.exec(amount);
  if (!match) throw new RangeError(`${amount} is not a credit amount (at most 4 decimals, under 10^10)`);
  const units = Number(match[2]) * CREDIT_SCALE + Number((match[3] ?? '').padEnd(4, '0'));
  return match[1] ? -units : units;
}

/** Ten-thousandths as the decimal string the API answers: "12.5000", "-0.1000". */
export function creditString(units: number): string {
  if (!Number.isSafeInteger(units)) throw new RangeError(`${units} is not a whole number of ten-thousandths`);
  const magnitude = Math.abs(units);
  const whole = Math.floor(magnitude / CREDIT_SCALE);
  const fraction = String(magnitude % CREDIT_SCALE).padStart(4, '0');
  return `${units < 0 ? '-' : ''}${whole}.${fraction}`;
}

/** A numeric(14,4) PostgreSQL answered as text ("12.5000"), normalised to the API's form. */
export const normalisedCredits = (text: string): string => creditString(creditUnits(text));
