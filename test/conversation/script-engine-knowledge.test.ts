// The script engine's answers from the agent's knowledge and its offers of a person or a callback
// (docs/features/conversation/rules.md#questions), over an in-memory context: pure, no server.
import { describe, expect, it } from 'vitest';
import type { KnowledgePassage } from '../../lib/conversation/engine';
import {
  asksSomething,
  asksToRepeat,
  MAX_PASSAGE_CHARS_READ,
  MAX_SPOKEN_ANSWER_CHARS,
  spokenAnswerOf,
} from '../../lib/conversation/knowledge-answer';
import { createScriptEngine } from '../../lib/conversation/script-engine';
import type { DialogueToolCall, DialogueToolResult } from '../../lib/conversation/tools';
import { agentCall, collect, recordingContext } from '../support/openai-twin';

const QUESTIONS = ['Which colour would you like?', 'How many pairs would you like?'];
const DELIVERY: KnowledgePassage = {
  documentId: 'd1',
  title: 'Delivery',
  text:
    'We ship from Lisbon. Orders to Canada arrive within five working days, shipped by courier.\n\n' +
    'Tracking is sent by email. Returns are free for thirty days.',
};

/** A conversation of the shoe shop's script engine, its knowledge answering `passages`, its tools `tools`. */
async function conversation(
  options: {
    transferNumber?: string | null;
    passages?: readonly KnowledgePassage[];
    tools?: (call: DialogueToolCall) => DialogueToolResult;
    language?: string;
  } = {},
) {
  const context = recordingContext({
    instructions: null,
    call: agentCall({
      language: options.language ?? 'en-US',
      script: { openingLine: 'Hi {{name}}!', questions: QUESTIONS, closing: 'Thanks, bye.' },
      transferNumber: options.transferNumber ?? null,
    }),
    knowledge: () => options.passages ?? [],
    ...(options.tools && { tools: options.tools }),
  });
  const engine = createScriptEngine(context);
  expect(await engine.start()).toBe(QUESTIONS[0]);
  const say = async (text: string) => (await collect(engine.onPrompt(text))).join('');
  return { context, engine, say };
}

describe('asksSomething', () => {
  it.each([
    ['Do you ship to Canada?', 'en-US'],
    ['how long does delivery take', 'en-US'],
    ['So what does it cost', 'en-GB'],
    ['Tell me about returns.', 'en-US'],
    ["I'd like to know the price", 'en-US'],
    ['¿Hacen envíos a Canadá?', 'es-ES'],
    ['cuánto tarda el envío', 'es-MX'],
    ['Dígame el precio', 'es-ES'],
  ])('%s (%s) asks something', (utterance, language) => expect(asksSomething(utterance, language)).toBe(true));

  it.each([
    ['Red, please.', 'en-US'],
    ['Yes.', 'en-US'],
    ['Two pairs.', 'en-US'],
    ['That makes sense.', 'en-US'],
    ['Rojo, por favor.', 'es-ES'],
    ['Sí, claro.', 'es-ES'],
  ])('%s (%s) asks nothing', (utterance, language) => expect(asksSomething(utterance, language)).toBe(false));
});

describe('asksToRepeat', () => {
  it.each([
    ['Sorry?', 'en-US'],
    ['What?', 'en-US'],
    ['Could you repeat that, please?', 'en-GB'],
    ["Sorry, I didn't catch that.", 'en-US'],
    ['¿Cómo?', 'es-ES'],
    ['¿Me lo repite, por favor?', 'es-MX'],
  ])('%s (%s) asks to hear it again', (utterance, language) => expect(asksToRepeat(utterance, language)).toBe(true));

  it.each([
    ['What does it cost?', 'en-US'],
    ['Sorry, red.', 'en-US'],
    ['¿Qué precio tiene?', 'es-ES'],
  ])('%s (%s) does not', (utterance, language) => expect(asksToRepeat(utterance, language)).toBe(false));
});

describe('spokenAnswerOf', () => {
  it("says the passage's sentence sharing most words with the question, with the next one when both fit", () => {
    expect(spokenAnswerOf(DELIVERY, 'How long does delivery to Canada take?')).toBe(
      'Orders to Canada arrive within five working days, shipped by courier. Tracking is sent by email.',
    );
    expect(spokenAnswerOf(DELIVERY, 'Are returns free?')).toBe('Returns are free for thirty days.');
    // Nothing in common: the passage's first sentences.
    expect(spokenAnswerOf(DELIVERY, 'Hmm?')).toBe(
      'We ship from Lisbon. Orders to Canada arrive within five working days, shipped by courier.',
    );
  });

  it('cuts a sentence longer than a spoken answer at a word, and reads a bounded part of a hostile passage', () => {
    const long = `Canada ${'delivery takes a while '.repeat(40)}`;
    const said = spokenAnswerOf({ text: long }, 'Canada?');
    expect(said.length).toBeLessThanOrEqual(MAX_SPOKEN_ANSWER_CHARS);
    expect(said).toMatch(/^Canada delivery takes a while .*…$/);
    const endless = 'x'.repeat(10 * MAX_PASSAGE_CHARS_READ);
    expect(spokenAnswerOf({ text: endless }, 'x?')).toHaveLength(MAX_SPOKEN_ANSWER_CHARS);
    expect(spokenAnswerOf({ text: ' \n ' }, 'anything?')).toBe('');
  });
});

describe("the script engine's questions and offers", () => {
  it("answers a question from the agent's knowledge, asks its question again, and goes on with the script", async () => {
    const { context, say } = await conversation({ passages: [DELIVERY] });
    const answer = 'Orders to Canada arrive within five working days, shipped by courier. Tracking is sent by email.';
    expect(await say('How long does delivery to Canada take?')).toBe(`${answer} ${QUESTIONS[0]}`);
    expect(context.knowledgeQueries).toEqual(['How long does delivery to Canada take?']);
    expect(await say('Red.')).toBe(QUESTIONS[1]);
    expect(context.turns.filter((turn) => turn.step === 1).map((turn) => [turn.speaker, turn.text])).toEqual([
      ['lead', 'How long does delivery to Canada take?'],
      ['agent', answer],
      ['agent', QUESTIONS[0]],
    ]);
    expect(context.turns.filter((turn) => turn.step === 2).map((turn) => turn.text)).toEqual(['Red.', QUESTIONS[1]]);
  });

  it('a question no document answers: a callback offered (no transfer number); yes asks when, and the time books it', async () => {
    const { context, engine, say } = await conversation({
      tools: (call) =>
        call.name === 'schedule_callback'
          ? { ok: true, result: 'booked', endsConversation: true, data: { localTime: 'Friday at 3 PM' } }
          : { ok: true, result: 'done', endsConversation: true },
    });
    expect(await say('What does a pair cost?')).toBe(
      "I'm sorry, I don't have that information. Would you like someone to call you back about it?",
    );
    expect(await say('Yes please.')).toBe('Of course. When would be a good time to call you back?');
    expect(await say('Friday at 3 pm.')).toBe("Of course. We'll call you back on Friday at 3 PM. Goodbye.");
    expect(context.toolCalls).toEqual([{ name: 'schedule_callback', arguments: { when: 'Friday at 3 pm.' } }]);
    expect(engine.ended).toBe(true);
  });

  it('a question no document answers: a person offered when the agent has a transfer number; yes transfers', async () => {
    const { context, engine, say } = await conversation({ transferNumber: '+14155550100' });
    expect(await say('What does a pair cost?')).toBe(
      "I'm sorry, I don't have that information. Would you like me to put you through to a colleague?",
    );
    expect(await say('Yes.')).toBe('Of course, let me put you through to a colleague. One moment, please.');
    // The colleague is told what the lead asked.
    expect(context.toolCalls).toEqual([
      {
        name: 'transfer_to_human',
        arguments: { summary: 'Ada asked what the agent could not answer: "What does a pair cost?"' },
      },
    ]);
    expect(engine.ended).toBe(true);
  });

  it('no to an offer goes back to the question asked last; an answer instead of yes or no is the answer', async () => {
    const { context, say } = await conversation({ transferNumber: '+14155550100' });
    await say('What does a pair cost?');
    expect(await say('No, thanks.')).toBe(`No problem. ${QUESTIONS[0]}`);
    expect(await say('Red.')).toBe(QUESTIONS[1]);
    await say('Is there a discount?');
    expect(await say('Two pairs.')).toBe('Thanks, bye.');
    expect(context.toolCalls).toEqual([]);
  });

  it('"sorry?" hears the last words again, an offer in them still standing', async () => {
    const { context, say } = await conversation({ transferNumber: '+14155550100' });
    expect(await say('Sorry?')).toBe(QUESTIONS[0]);
    const offer = "I'm sorry, I don't have that information. Would you like me to put you through to a colleague?";
    expect(await say('What does a pair cost?')).toBe(offer);
    expect(await say('Could you repeat that?')).toBe(offer);
    expect(await say('Yes.')).toBe('Of course, let me put you through to a colleague. One moment, please.');
    expect(context.toolCalls.map((call) => call.arguments)).toEqual([
      { summary: 'Ada asked what the agent could not answer: "What does a pair cost?"' },
    ]);
  });

  it('a transfer nobody can take offers a callback, which yes takes', async () => {
    const { say } = await conversation({
      tools: () => ({ ok: false, result: 'No human can take this call.', endsConversation: false }),
    });
    expect(await say('Can I talk to a real person?')).toBe(
      "I'm sorry, nobody can take the call right now. Would you like us to call you back later?",
    );
    expect(await say('Sure.')).toBe('Of course. When would be a good time to call you back?');
  });

  it('in Spanish, from the knowledge and with its offers', async () => {
    const passage = { documentId: 'd2', title: 'Envíos', text: 'Los pedidos a Canadá llegan en cinco días.' };
    const answered = await conversation({ language: 'es-ES', passages: [passage] });
    expect(await answered.say('¿Cuánto tarda el envío a Canadá?')).toBe(`${passage.text} ${QUESTIONS[0]}`);
    const offered = await conversation({ language: 'es-ES' });
    expect(await offered.say('¿Cuánto cuesta?')).toBe(
      'Lo siento, no tengo esa información. ¿Quiere que alguien le llame para contárselo?',
    );
    expect(await offered.say('No, gracias.')).toBe(`De acuerdo. ${QUESTIONS[0]}`);
  });
});
