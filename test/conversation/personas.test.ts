// The personas the carrier twins play by the number (docs/features/conversation/relay.md#personas): pure, both twins
// resolve a call's persona with personaOf when it is dialed.
import { describe, expect, it } from 'vitest';
import { BUILT_IN_PERSONAS, personaOf, type PersonaScript } from '../../simulators/twilio-twin/persona';

describe('personaOf', () => {
  it('plays persona T for a number ending 07TD, whatever the area code and the last digit', () => {
    const none = new Map<string, PersonaScript>();
    expect(personaOf(none, '+14155550710')).toEqual(BUILT_IN_PERSONAS['1']!.script);
    expect(personaOf(none, '+12125550724')).toEqual(BUILT_IN_PERSONAS['2']!.script);
    expect(personaOf(none, '+13125550766')).toEqual(BUILT_IN_PERSONAS['6']!.script);
    expect(Object.keys(BUILT_IN_PERSONAS)).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('plays no persona (the default person) outside the range or for a T without one', () => {
    const none = new Map<string, PersonaScript>();
    expect(personaOf(none, '+14155550100')).toBeNull();
    expect(personaOf(none, '+14155550700')).toBeNull();
    expect(personaOf(none, '+14155550790')).toBeNull();
    expect(personaOf(none, '+14155560710')).toBeNull();
  });

  it("lets a test's script win over the number's persona", () => {
    const scripted: PersonaScript = { answers: ['Red.'] };
    expect(personaOf(new Map([['+14155550720', scripted]]), '+14155550720')).toBe(scripted);
  });
});
