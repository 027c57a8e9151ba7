import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { z } from 'zod';

/** The E.164 form of a valid international number, or null. Only "+<country><number>" input is read. */
export function normalizeE164(input: string): string | null {
  const trimmed = input.trim();
  if (!trimmed.startsWith('+')) return null;
  const phone = parsePhoneNumberFromString(trimmed);
  return phone?.isValid() ? phone.number : null;
}

/** A phone number in, its E.164 form out; anything else fails validation. */
export const e164PhoneSchema = z.string().transform((value, ctx) => {
  const normalized = normalizeE164(value);
  if (!normalized) {
    ctx.addIssue({ code: 'custom', message: 'must be a valid E.164 number, for example +14155550123' });
    return z.NEVER;
  }
  return normalized;
});
