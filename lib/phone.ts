import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** The E.164 form of a valid international number, or null. Only "+<country><number>" input is read. */
export function normalizeE164(input: string): string | null {
  const trimmed = input.trim();
  if (!trimmed.startsWith('+')) return null;
  const phone = parsePhoneNumberFromString(trimmed);
  return phone?.isValid() ? phone.number : null;
}
