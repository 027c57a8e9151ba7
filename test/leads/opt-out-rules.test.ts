// The rules that read an opt-out (docs/features/leads.md#the-do-not-call-list), pure: a WhatsApp reply's keyword or
// button (lib/whatsapp/opt-out-reply.ts), the script walk's step (lib/conversation/script-walk.ts) and the call
// intelligence's rule over a transcript (lib/call-intelligence/opt-out.ts).
import { describe, expect, it } from 'vitest';
import { optOutHeard } from '../../lib/call-intelligence/opt-out';
import { heardOptOut, OPTED_OUT_LINES, scriptStepOf, type ScriptCall } from '../../lib/conversation/script-walk';
import type { WhatsAppInboundMessage } from '../../lib/whatsapp/webhook';
import { isOptOutKeyword, isOptOutReply } from '../../lib/whatsapp/opt-out-reply';

describe('an opt-out keyword in a WhatsApp reply', () => {
  it('is the whole message, whatever its case, accents, spaces and punctuation', () => {
    for (const text of [
      'STOP',
      'stop',
      '  Stop! ',
      'S T O P',
      'Unsubscribe.',
      'opt out',
      'OPT-OUT',
      'Stop promotions',
      'BAJA',
      'dar de baja',
      'Cancelar',
      'ARRÊT',
      'arret',
      'Désabonner',
      'sair',
      'STOPP',
      'stop 🛑',
    ])
      expect(isOptOutKeyword(text), text).toBe(true);
  });

  it('is not a keyword inside a longer message, nor a message over 64 characters', () => {
    for (const text of [
      "don't stop",
      'stop by tomorrow at 3',
      'Please stop',
      'bajar el precio',
      'cancel my order #1001',
      'start',
      '',
      `stop${' '.repeat(64)}`,
    ])
      expect(isOptOutKeyword(text), text).toBe(false);
  });

  const message = (fields: Partial<WhatsAppInboundMessage>): WhatsAppInboundMessage => ({
    from: '14155550100',
    id: 'wamid.1',
    timestamp: 1765000000,
    type: 'text',
    ...fields,
  });

  it("reads a text, a template's quick-reply button (its payload or text) and an interactive button's title", () => {
    expect(isOptOutReply(message({ text: { body: 'Stop' } }))).toBe(true);
    expect(
      isOptOutReply(message({ type: 'button', button: { text: 'Stop promotions', payload: 'Stop promotions' } })),
    ).toBe(true);
    expect(isOptOutReply(message({ type: 'button', button: { text: 'No more offers', payload: 'UNSUBSCRIBE' } }))).toBe(
      true,
    );
    expect(isOptOutReply(message({ type: 'interactive', interactive: { button_reply: { title: 'Baja' } } }))).toBe(
      true,
    );
    expect(isOptOutReply(message({ type: 'button', button: { text: 'Yes please', payload: 'YES' } }))).toBe(false);
    expect(isOptOutReply(message({ type: 'image', image: { caption: 'stop' } }))).toBe(false);
  });
});

describe('the script walk hearing an opt-out', () => {
  const call = (language: string): ScriptCall => ({
    agent: {
      language,
      voiceId: 'espeak-ng/en-us',
      script: { openingLine: 'Hello {{name}}.', questions: ['Which colour?', 'How many?'], closing: 'Goodbye.' },
    },
    lead: { name: 'Ana', fields: {} },
  });
  const heard = (text: string) => ({ kind: 'step' as const, step: 1, heard: { text, confidence: 0.9 } });

  it('says the opted-out line and hangs up, whatever questions are left, in the agent language', () => {
    const step = scriptStepOf(call('en-US'), heard('Please stop calling me.'));
    expect(step).toEqual({
      step: 1,
      lines: [OPTED_OUT_LINES.en],
      question: null,
      turns: [
        { step: 1, part: 0, speaker: 'lead', text: 'Please stop calling me.', confidence: 0.9 },
        { step: 1, part: 2, speaker: 'agent', text: OPTED_OUT_LINES.en, confidence: null },
      ],
    });
    // A Spanish agent hears an English opt-out too, and answers in Spanish.
    expect(scriptStepOf(call('es-MX'), heard('remove me from your list')).lines).toEqual([OPTED_OUT_LINES.es]);
    expect(heardOptOut(heard('No me vuelva a llamar'))).toBe(true);
  });

  it('goes on as before for any other answer, silence and the other steps', () => {
    expect(scriptStepOf(call('en-US'), heard('Navy, please.')).question).toBe('How many?');
    expect(heardOptOut({ kind: 'step', step: 1, heard: null })).toBe(false);
    expect(heardOptOut({ kind: 'answer' })).toBe(false);
    expect(heardOptOut(heard("don't call me tomorrow, call me Friday"))).toBe(false);
  });
});

describe("the call intelligence's opt-out rule", () => {
  it("finds the lead's first turn asking not to be called, never the agent's", () => {
    expect(
      optOutHeard([
        { speaker: 'agent', text: 'We will not call you again if you say stop calling me.', offsetMs: 0 },
        { speaker: 'lead', text: 'Blue.', offsetMs: 1_000 },
        { speaker: 'lead', text: 'Actually, take me off your list.', offsetMs: 2_000 },
        { speaker: 'lead', text: 'Do not call me again.', offsetMs: 3_000 },
      ]),
    ).toEqual({ evidence: 'Actually, take me off your list.' });
    expect(optOutHeard([{ speaker: 'lead', text: 'Call me back tomorrow at 3.', offsetMs: 0 }])).toBeNull();
  });
});
