// The redaction rules (lib/compliance/redaction.ts, docs/features/compliance.md#redaction): pure, no server.
import { describe, expect, it } from 'vitest';
import {
  REDACTION_RULES,
  passesIbanCheck,
  passesLuhn,
  redactText,
  redactTurns,
  type RedactionRule,
} from '../../lib/compliance/redaction';

const only = (...redactions: RedactionRule[]) => ({ redactions });
const all = only(...REDACTION_RULES);

describe('card numbers', () => {
  const cards = only('card_number');
  it('are masked with spaces, dashes or none between their digits, 13 to 19 digits, Luhn-checked', () => {
    expect(redactText('my card is 4111 1111 1111 1111, thanks', cards)).toBe('my card is [card number], thanks');
    expect(redactText('4111-1111-1111-1111', cards)).toBe('[card number]');
    expect(redactText('it is 5555555555554444.', cards)).toBe('it is [card number].');
    expect(redactText('Amex 3782 822463 10005 ok', cards)).toBe('Amex [card number] ok'); // 15 digits
    expect(redactText('4222222222222', cards)).toBe('[card number]'); // 13 digits
    expect(redactText('6304 0000 0000 0000 018', cards)).toBe('[card number]'); // 19 digits
  });

  it('are found next to other numbers said with them (an expiry, a code)', () => {
    expect(redactText('4111 1111 1111 1111 12 27 and 123', cards)).toBe('[card number] 12 27 and 123');
    expect(redactText('order 12 then 4111 1111 1111 1111', cards)).toBe('order 12 then [card number]');
  });

  it('leave alone digits failing the Luhn check, too short or too long, and digits inside words', () => {
    for (const text of [
      'order 4111 1111 1111 1112', // Luhn fails
      'tracking 1234567812345678', // Luhn fails
      'call +1 415 555 0100', // 11 digits
      '411111111111', // 12 digits
      '41111111111111111111111', // 23 digits in one run
      'ref A4111111111111111', // part of a word
      '4111.1111.1111.1111', // dots are not a card's separators
    ])
      expect(redactText(text, cards)).toBe(text);
    expect(passesLuhn('79927398713')).toBe(true);
    expect(passesLuhn('79927398710')).toBe(false);
  });
});

describe('e-mail addresses', () => {
  const emails = only('email_address');
  it('are masked as written and as a recogniser writes them spoken', () => {
    expect(redactText('write to ana.lopez+shop@example.co.uk please', emails)).toBe('write to [email address] please');
    expect(redactText('it is ana at gmail dot com', emails)).toBe('it is [email address]');
    expect(redactText('Ana dot Lopez at example dot co dot uk.', emails)).toBe('Ana dot [email address].');
  });
  it('leave alone an @ alone and "at" without a domain', () => {
    for (const text of ['meet me @ noon', 'see you at five dot thirty', 'look at this'])
      expect(redactText(text, emails)).toBe(text);
  });
});

describe('US Social Security numbers', () => {
  const ssn = only('us_ssn');
  it('are masked with dashes, spaces or none', () => {
    expect(redactText('SSN 123-45-6789.', ssn)).toBe('SSN [SSN].');
    expect(redactText('123 45 6789', ssn)).toBe('[SSN]');
    expect(redactText('123456789', ssn)).toBe('[SSN]');
  });
  it('leave alone numbers never issued, mixed separators and other shapes', () => {
    for (const text of [
      '000-12-3456',
      '666-12-3456',
      '912-34-5678',
      '123-00-4567',
      '123-45-0000',
      '123-45 6789',
      '415-555-0100',
    ])
      expect(redactText(text, ssn)).toBe(text);
  });
});

describe('IBANs', () => {
  const ibans = only('iban');
  it('are masked grouped or not, in any case, when their check passes', () => {
    expect(redactText('IBAN DE89 3704 0044 0532 0130 00 please', ibans)).toBe('IBAN [IBAN] please');
    expect(redactText('gb82west12345698765432', ibans)).toBe('[IBAN]');
    expect(passesIbanCheck('GB82 WEST 1234 5698 7654 32')).toBe(true);
  });
  it('leave alone one with a wrong check', () => {
    expect(redactText('DE89 3704 0044 0532 0130 01', ibans)).toBe('DE89 3704 0044 0532 0130 01');
  });
});

describe('the rules', () => {
  it('apply only when on, and each masks only its own', () => {
    const text = 'card 4111 1111 1111 1111, mail ana@example.com, SSN 123-45-6789';
    expect(redactText(text, only())).toBe(text);
    expect(redactText(text, only('email_address'))).toBe(
      'card 4111 1111 1111 1111, mail [email address], SSN 123-45-6789',
    );
    expect(redactText(text, all)).toBe('card [card number], mail [email address], SSN [SSN]');
  });

  it("redact turns: their text, and a tool turn's arguments and result", () => {
    const turns = [
      { step: 1, part: 0, speaker: 'lead' as const, text: 'it is 4111 1111 1111 1111', confidence: 0.9 },
      {
        step: 1,
        part: 1,
        speaker: 'tool' as const,
        text: 'take_payment',
        confidence: null,
        tool: {
          name: 'take_payment',
          arguments: { card: '4111111111111111', n: 2 },
          result: 'ok for ana@example.com',
          ok: true,
        },
      },
    ];
    expect(redactTurns(turns, all)).toEqual([
      { ...turns[0], text: 'it is [card number]' },
      {
        ...turns[1],
        tool: {
          name: 'take_payment',
          arguments: { card: '[card number]', n: 2 },
          result: 'ok for [email address]',
          ok: true,
        },
      },
    ]);
    expect(turns[0]!.text).toBe('it is 4111 1111 1111 1111'); // not changed in place
    expect(redactTurns(turns, only())).toEqual(turns);
  });
});
