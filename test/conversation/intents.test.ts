import { describe, expect, it } from 'vitest';
import { recogniseIntent } from '../../lib/conversation/intents';
import { normaliseUtterance } from '../../lib/conversation/utterance';

const kindOf = (utterance: string, language: string) => recogniseIntent(utterance, language).kind;

describe('normaliseUtterance', () => {
  it('drops case, accents, apostrophes and punctuation, and writes clocks one way', () => {
    expect(normaliseUtterance('¡No me LLAMES más!')).toBe('no me llames mas');
    expect(normaliseUtterance("Don't call… Quíteme, ¿sí?")).toBe('dont call quiteme si');
    expect(normaliseUtterance('At 3.30 P.M., or 4pm; 5h15')).toBe('at 3:30 pm or 4 pm 5:15');
    expect(normaliseUtterance('Mañana, a las 10:00.')).toBe('manana a las 10:00');
  });
});

describe('recogniseIntent: opt-out', () => {
  it.each([
    'Stop calling me!',
    'Please stop calling this number',
    'Remove me from your list.',
    'Take me off your list',
    "Don't call again",
    "Don't ever call me again.",
    'Do not call me anymore',
    'Never call me again',
    "Please don't call me.",
    'Put me on your do not call list',
    'I want to be removed',
    'Unsubscribe',
    'Lose my number',
    'Just leave me alone',
  ])('English: %s', (utterance) => expect(kindOf(utterance, 'en-US')).toBe('opt_out'));

  it.each([
    'No me llame más',
    '¡No me llames más!',
    'no me llamen nunca más',
    'Por favor, no me vuelva a llamar',
    'Quíteme de su lista',
    'Sáquenme de la lista',
    'Dejen de llamarme',
    'Deja de llamar',
    'Borre mi número',
    'Quiero darme de baja',
    'No quiero que me llamen',
    'No quiero recibir más llamadas',
    'Déjeme en paz',
  ])('Spanish: %s', (utterance) => expect(kindOf(utterance, 'es-ES')).toBe('opt_out'));

  it('is heard in either language, whatever the agent speaks', () => {
    expect(kindOf('No me llame más', 'en-US')).toBe('opt_out');
    expect(kindOf('Stop calling me', 'es-MX')).toBe('opt_out');
    expect(kindOf('Stop calling me', 'fr-FR')).toBe('opt_out');
  });

  it('is not a "don\'t call me" that goes on to name another time, nor a plain no', () => {
    expect(recogniseIntent("Don't call me tomorrow, call me on Friday", 'en')).toEqual({
      kind: 'callback',
      timePhrase: 'tomorrow call me on friday',
    });
    expect(kindOf('No me llame mañana, llámeme el lunes', 'es')).toBe('callback');
    expect(kindOf('No, thanks', 'en')).toBe('no');
    expect(kindOf('Stop, I have a question', 'en')).toBe('other');
  });
});

describe('recogniseIntent: a person', () => {
  it.each([
    'Can I talk to a person?',
    'Can I speak to a human?',
    'Let me talk to someone',
    "I'd like to speak with a real person",
    'Can I talk to an agent please',
    'Put me through to your manager',
    'Transfer me',
    'Is there a human I can talk to?',
    'I want a human',
    'Operator!',
    'Representative, please',
  ])('English: %s', (utterance) => expect(kindOf(utterance, 'en')).toBe('wants_person'));

  it.each([
    'Quiero hablar con una persona',
    '¿Puedo hablar con un humano?',
    'Quiero hablar con alguien',
    '¿Me puede pasar con un asesor?',
    'Páseme con su supervisor',
    'Necesito una persona real',
    'Comuníqueme con un agente',
    'Operadora, por favor',
  ])('Spanish: %s', (utterance) => expect(kindOf(utterance, 'es-419')).toBe('wants_person'));

  it('is not a question about the agent, nor a person mentioned in passing', () => {
    expect(kindOf('Are you a robot?', 'en')).toBe('other');
    expect(kindOf('My wife is the person who decides', 'en')).toBe('other');
    expect(kindOf('Mi esposa es la persona que decide', 'es')).toBe('other');
  });
});

describe('recogniseIntent: callback', () => {
  it.each([
    ['Call me back tomorrow at three', 'tomorrow at three'],
    ['Can you call me in two hours?', 'in two hours'],
    ['Try me again next Monday morning', 'next monday morning'],
    ['Call me tonight', 'tonight'],
    ["I'm busy, call me this afternoon", 'this afternoon'],
    ['Tomorrow at three works for me', 'tomorrow at three'],
    ['Maybe on Friday, please', 'on friday'],
    ['At 3:30 pm', 'at 3:30 pm'],
  ])('English: %s', (utterance, timePhrase) =>
    expect(recogniseIntent(utterance, 'en-GB')).toEqual({ kind: 'callback', timePhrase }),
  );

  it.each([
    ['Llámeme mañana a las tres', 'manana a las tres'],
    ['¿Me puede llamar el lunes por la mañana?', 'el lunes por la manana'],
    ['Mejor pasado mañana', 'pasado manana'],
    ['En dos horas, por favor', 'en dos horas'],
    ['Vuelva a llamarme esta tarde', 'esta tarde'],
    ['Mañana por la mañana', 'manana por la manana'],
  ])('Spanish: %s', (utterance, timePhrase) =>
    expect(recogniseIntent(utterance, 'es-US')).toEqual({ kind: 'callback', timePhrase }),
  );

  it.each([
    ["I'm busy right now", 'en'],
    ['Call me back later', 'en'],
    ["It's not a good time", 'en'],
    ['Estoy ocupado, llámame más tarde', 'es'],
    ['Ahora no puedo hablar', 'es'],
    ['No es buen momento', 'es'],
  ])('without saying when: %s', (utterance, language) =>
    expect(recogniseIntent(utterance, language)).toEqual({ kind: 'callback', timePhrase: null }),
  );

  it('is not a time mentioned in passing', () => {
    expect(kindOf('I bought it on Monday, it broke', 'en')).toBe('other');
    expect(kindOf('I have three kids', 'en')).toBe('other');
    expect(kindOf('Lo compré el lunes y se rompió', 'es')).toBe('other');
  });
});

describe('recogniseIntent: yes and no', () => {
  it.each(['Yes', 'Yeah, sure', 'Of course!', 'Okay', "That's right", 'Sounds good', 'Absolutely', 'No problem'])(
    'English yes: %s',
    (utterance) => expect(kindOf(utterance, 'en')).toBe('yes'),
  );
  it.each(['No', 'Nope', 'No thanks', 'Not interested', 'Of course not', "I don't think so", 'Not right now'])(
    'English no: %s',
    (utterance) => expect(kindOf(utterance, 'en')).toBe('no'),
  );
  it.each(['Sí', 'Claro que sí', 'Vale', 'De acuerdo', 'Por supuesto', '¡Cómo no!', '¿Por qué no?', 'Sí, me interesa'])(
    'Spanish yes: %s',
    (utterance) => expect(kindOf(utterance, 'es')).toBe('yes'),
  );
  it.each(['No', 'No, gracias', 'Para nada', 'No me interesa', 'Claro que no', 'No estoy interesada'])(
    'Spanish no: %s',
    (utterance) => expect(kindOf(utterance, 'es')).toBe('no'),
  );

  it('takes the last of a yes and a no (a correction), and an unsure answer as neither', () => {
    expect(kindOf('No... wait, yes', 'en')).toBe('yes');
    expect(kindOf('Yes, I mean no', 'en')).toBe('no');
    expect(kindOf("I'm not sure", 'en')).toBe('other');
    expect(kindOf("I don't know", 'en')).toBe('other');
    expect(kindOf('No sé', 'es')).toBe('other');
    expect(kindOf('No estoy seguro', 'es')).toBe('other');
  });

  it('answers other to anything else', () => {
    expect(kindOf('What is this about?', 'en')).toBe('other');
    expect(kindOf('¿Quién habla?', 'es')).toBe('other');
    expect(kindOf('', 'en')).toBe('other');
  });

  it('reads languages without rules of their own, and malformed tags, by the English rules', () => {
    expect(kindOf('Yes', 'fr-FR')).toBe('yes');
    expect(kindOf('Can I talk to a person?', 'de')).toBe('wants_person');
    expect(kindOf('Yes', 'not a tag!')).toBe('yes');
    // Spanish words are not read under English rules, nor English under Spanish (but for an opt-out).
    expect(kindOf('Claro', 'en-US')).toBe('other');
    expect(kindOf('Yes', 'es-ES')).toBe('other');
  });
});

describe('recogniseIntent: precedence', () => {
  it('an opt-out beats everything', () => {
    expect(kindOf('No, stop calling me', 'en')).toBe('opt_out');
    expect(kindOf('Call me tomorrow... actually no, remove me from your list', 'en')).toBe('opt_out');
    expect(kindOf('Let me talk to a person and then take me off your list', 'en')).toBe('opt_out');
    expect(kindOf('Sí, pero no me llame más', 'es')).toBe('opt_out');
  });

  it('a person beats a callback, yes and no', () => {
    expect(kindOf('Yes, but can I talk to a person first?', 'en')).toBe('wants_person');
    expect(kindOf("I'd rather talk to a human, call me tomorrow", 'en')).toBe('wants_person');
    expect(kindOf('No, quiero hablar con una persona', 'es')).toBe('wants_person');
  });

  it('a callback beats yes and no', () => {
    expect(recogniseIntent('No, call me tomorrow', 'en')).toEqual({ kind: 'callback', timePhrase: 'tomorrow' });
    expect(recogniseIntent('No, tomorrow at three', 'en')).toEqual({
      kind: 'callback',
      timePhrase: 'tomorrow at three',
    });
    expect(recogniseIntent('Yes, next Monday morning', 'en')).toEqual({
      kind: 'callback',
      timePhrase: 'next monday morning',
    });
    expect(recogniseIntent('Sí, llámeme mañana', 'es')).toEqual({ kind: 'callback', timePhrase: 'manana' });
    expect(recogniseIntent('No, mejor el lunes', 'es')).toEqual({ kind: 'callback', timePhrase: 'el lunes' });
  });
});
