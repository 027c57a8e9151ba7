import { describe, expect, it } from 'vitest';
import { extractByRules } from '../../lib/call-intelligence/rule-based-extraction';
import { EVALUATION_RULES, evaluateCall, saysLine } from '../../lib/call-intelligence/call-evaluation';
import { fieldWords, matchFieldsToQuestions } from '../../lib/call-intelligence/field-questions';
import {
  simulatedConversation,
  type SimulatedConversationAgent,
} from '../../simulators/simulated-carrier/conversation';
import { transcriptSchema, type Transcript } from '../../lib/calls/transcript';

const AGENT: SimulatedConversationAgent = {
  language: 'en-US',
  script: {
    openingLine: 'Hi {{name}}, this is Ana from Acme about your {{ product }} order.',
    questions: [
      'How many units do you need?',
      'Are you the decision maker?',
      'Which plan do you prefer?',
      'When should we deliver?',
      'What is your company name?',
      'Anything else we should know?',
    ],
    closing: 'Thank you, goodbye.',
  },
  extractionFields: [
    { name: 'units', type: 'number' },
    { name: 'decision_maker', type: 'boolean' },
    { name: 'plan', type: 'enum', allowedValues: ['basic', 'pro', 'enterprise'] },
    { name: 'deliveryDate', type: 'date' },
    { name: 'companyName', type: 'string' },
  ],
};
const FIELDS = AGENT.extractionFields;
const LEAD = {
  name: 'Maria',
  fields: {
    product: 'shoes',
    units: 12,
    decision_maker: 'no',
    plan: 'PRO',
    deliveryDate: '2026-12-24',
    companyName: 'Zeta Ltd',
  },
};

const conversation = (overrides: Partial<Parameters<typeof simulatedConversation>[0]> = {}) =>
  simulatedConversation({
    agent: AGENT,
    lead: LEAD,
    answeredBy: 'human',
    durationMs: 40_000,
    seed: 'sim_1',
    ...overrides,
  });

describe('the simulated conversation', () => {
  it('is the same for the same input and differs by seed where the seed chooses', () => {
    expect(conversation()).toEqual(conversation());
    const unknownLead = { name: null, fields: {} };
    const seeds = ['a', 'b', 'c', 'd', 'e', 'f'].map((seed) => conversation({ lead: unknownLead, seed }));
    expect(new Set(seeds.map((turns) => JSON.stringify(turns))).size).toBeGreaterThan(1);
  });

  it('opens with the filled opening line, asks every question in order, has the lead answer each, and closes', () => {
    const turns = conversation();
    expect(transcriptSchema.parse(turns)).toEqual(turns);
    expect(turns[0]).toEqual({
      speaker: 'agent',
      text: 'Hi Maria, this is Ana from Acme about your shoes order.',
      offsetMs: 0,
    });
    expect(turns[1]!.speaker).toBe('lead');
    expect(turns[1]!.text).toContain('Maria');
    const asked = turns.filter((turn, index) => index > 0 && turn.speaker === 'agent').map((turn) => turn.text);
    expect(asked).toEqual([...AGENT.script.questions, AGENT.script.closing]);
    turns.slice(2, -1).forEach((turn, index) => expect(turn.speaker).toBe(index % 2 === 0 ? 'agent' : 'lead'));
    expect(turns.at(-1)).toMatchObject({ speaker: 'agent', text: 'Thank you, goodbye.' });
  });

  it("answers with the lead's own values where they fit the field's type", () => {
    const answers = conversation()
      .filter((turn) => turn.speaker === 'lead')
      .map((turn) => turn.text);
    expect(answers[1]).toMatch(/\b12\b/);
    expect(answers[2]).toMatch(/^No\b/);
    expect(answers[3]).toContain('pro');
    expect(answers[4]).toContain('December 24, 2026');
    expect(answers[5]).toContain('Zeta Ltd');
  });

  it('spreads the turns over the call: offsets rise from 0 and stay within its length', () => {
    const turns = conversation({ durationMs: 65_000 });
    const offsets = turns.map((turn) => turn.offsetMs);
    expect(offsets[0]).toBe(0);
    offsets.slice(1).forEach((offset, index) => expect(offset).toBeGreaterThan(offsets[index]!));
    expect(offsets.at(-1)).toBeLessThan(65_000);
    expect(offsets.at(-1)).toBeGreaterThan(65_000 / 2);
  });

  it("is a voicemail greeting and the agent's message when a machine answers", () => {
    const turns = conversation({ answeredBy: 'machine' });
    expect(turns.map((turn) => turn.speaker)).toEqual(['lead', 'agent']);
    expect(turns[0]!.text).toMatch(/leave a message/);
    expect(turns[1]!.text).toBe('Hi Maria, this is Ana from Acme about your shoes order. Thank you, goodbye.');
  });

  it('is a short generic conversation without an agent', () => {
    const turns = conversation({ agent: null });
    expect(turns.map((turn) => turn.speaker)).toEqual(['agent', 'lead', 'agent', 'lead']);
    expect(turns[0]!.text).toContain('Maria');
  });

  it('leaves out a variable the lead has no value for', () => {
    const [opening] = conversation({ lead: { name: null, fields: {} } });
    expect(opening!.text).toBe('Hi, this is Ana from Acme about your order.');
  });
});

describe('which question asks for which field', () => {
  it('splits names into words and matches whole words, plurals and shared stems', () => {
    expect(fieldWords('decision_maker')).toEqual(['decision', 'maker']);
    expect(fieldWords('deliveryDate2')).toEqual(['delivery', 'date']);
    expect(
      matchFieldsToQuestions(['units', 'deliveryDate', 'budget'], ['How many units?', 'When do we deliver?', 'Hello?']),
    ).toEqual([0, 1, undefined]);
  });

  it('gives each question to one field at most: the better-matched, else the earlier', () => {
    expect(matchFieldsToQuestions(['city', 'home_city'], ['Which home city?', 'Which city?'])).toEqual([0, 1]);
  });
});

describe('the rule-based extractor', () => {
  it('reads back every field the simulated conversation answered', () => {
    const extraction = extractByRules(FIELDS, conversation());
    expect(Object.fromEntries(Object.entries(extraction).map(([name, field]) => [name, field.value]))).toEqual({
      units: 12,
      decision_maker: false,
      plan: 'pro',
      deliveryDate: '2026-12-24',
      companyName: 'Zeta Ltd',
    });
    expect(extraction.units!.confidence).toBe(0.9);
    expect(extraction.companyName!.confidence).toBe(0.8);
    expect(extraction.plan!.evidence).toMatch(/pro/);
  });

  it('reads back the values the seed chose for a lead without fields, for any seed', () => {
    for (const seed of ['x1', 'x2', 'x3', 'x4']) {
      const extraction = extractByRules(FIELDS, conversation({ lead: { name: 'Bo', fields: {} }, seed }));
      expect(typeof extraction.units!.value).toBe('number');
      expect(typeof extraction.decision_maker!.value).toBe('boolean');
      expect(['basic', 'pro', 'enterprise']).toContain(extraction.plan!.value);
      expect(extraction.deliveryDate!.value).toMatch(/^2026-\d\d-\d\d$/);
      // A string field the lead has no value for is a non-answer: unfilled.
      expect(extraction.companyName).toMatchObject({ value: null, confidence: 0 });
    }
  });

  const exchange = (question: string, answer: string): Transcript => [
    { speaker: 'agent', text: 'Hello, this is Acme.', offsetMs: 0 },
    { speaker: 'lead', text: 'Hi.', offsetMs: 1_000 },
    { speaker: 'agent', text: question, offsetMs: 2_000 },
    { speaker: 'lead', text: answer, offsetMs: 3_000 },
  ];
  const read = (
    field: (typeof FIELDS)[number] | { name: string; type: string; allowedValues?: string[] },
    question: string,
    answer: string,
  ) => extractByRules([field], exchange(question, answer))[field.name]!.value;

  it('reads each type from the answer to the question that mentions the field', () => {
    expect(read({ name: 'budget', type: 'number' }, 'What is your budget?', 'Around 1,250.50 dollars.')).toBe(1250.5);
    expect(read({ name: 'budget', type: 'number' }, 'What is your budget?', 'No idea yet.')).toBeNull();
    expect(read({ name: 'interested', type: 'boolean' }, 'Are you interested?', 'Yeah, absolutely.')).toBe(true);
    expect(read({ name: 'interested', type: 'boolean' }, 'Are you interested?', "Not really, I'm fine.")).toBe(false);
    expect(read({ name: 'interested', type: 'boolean' }, 'Are you interested?', 'Hmm.')).toBeNull();
    const tier = { name: 'tier', type: 'enum', allowedValues: ['Gold', 'Gold Plus', 'Silver'] };
    expect(read(tier, 'Which tier?', 'gold plus, I think')).toBe('Gold Plus');
    expect(read(tier, 'Which tier?', 'Golden, maybe.')).toBeNull();
    expect(read({ name: 'start_date', type: 'date' }, 'What start date suits you?', 'The 3rd of March, 2027.')).toBe(
      '2027-03-03',
    );
    expect(read({ name: 'start_date', type: 'date' }, 'What start date?', 'Say 2027-02-30.')).toBeNull();
    expect(read({ name: 'start_date', type: 'date' }, 'What start date?', '2027-02-28 works.')).toBe('2027-02-28');
    expect(read({ name: 'city', type: 'string' }, 'Which city do you live in?', "It's Lisbon.")).toBe('Lisbon');
    expect(read({ name: 'city', type: 'string' }, 'Which city do you live in?', "I'd rather not say.")).toBeNull();
  });

  it('finds a field no question mentions by its type, with less confidence, and never a string', () => {
    const transcript = exchange('Anything to add?', 'We could start on April 2, 2027.');
    const extraction = extractByRules(
      [
        { name: 'kickoff', type: 'date' },
        { name: 'notes', type: 'string' },
      ],
      transcript,
    );
    expect(extraction.kickoff).toEqual({
      value: '2027-04-02',
      confidence: 0.6,
      evidence: 'We could start on April 2, 2027.',
    });
    expect(extraction.notes).toEqual({ value: null, confidence: 0, evidence: null });
  });
});

describe('the evaluation', () => {
  const score = (overrides: Partial<Parameters<typeof evaluateCall>[0]> = {}) => {
    const transcript = conversation();
    const extraction = extractByRules(FIELDS, transcript);
    return evaluateCall({
      script: AGENT.script,
      fieldNames: FIELDS.map((field) => field.name),
      transcript,
      extracted: Object.fromEntries(Object.entries(extraction).map(([name, field]) => [name, field.value])),
      answeredBy: 'human',
      durationMs: 40_000,
      ...overrides,
    });
  };

  it('gives a complete call by a person every point, one reason per rule', () => {
    const evaluation = score();
    expect(evaluation.score).toBe(100);
    expect(evaluation.reasons.map((reason) => reason.rule)).toEqual(Object.keys(EVALUATION_RULES));
    expect(evaluation.reasons.every((reason) => reason.points === reason.maxPoints)).toBe(true);
  });

  it('takes points off for each rule broken', () => {
    expect(score({ answeredBy: 'machine' }).score).toBe(80);
    expect(score({ durationMs: 9_000 }).score).toBe(90);
    const transcript = conversation().filter(
      (turn) => turn.text !== 'Thank you, goodbye.' && turn.text !== 'Which plan do you prefer?',
    );
    const evaluation = score({
      transcript,
      extracted: { units: 12, decision_maker: false, plan: null, deliveryDate: null, companyName: 'x' },
    });
    const points = Object.fromEntries(evaluation.reasons.map((reason) => [reason.rule, reason.points]));
    expect(points).toEqual({
      answered_by_human: 20,
      opening_said: 10,
      questions_asked: 21,
      fields_filled: 15,
      closing_said: 0,
      call_length: 10,
    });
    expect(evaluation.score).toBe(76);
    expect(evaluation.reasons.find((reason) => reason.rule === 'questions_asked')!.detail).toBe(
      '5 of 6 questions asked',
    );
  });

  it('does not hold a call without an agent to a script', () => {
    expect(score({ script: null, fieldNames: [], transcript: conversation({ agent: null }) }).score).toBe(100);
  });

  it('matches script lines whatever a variable was filled with', () => {
    expect(saysLine('Hi Maria Lopez, this is Ana.', 'Hi {{name}}, this is Ana')).toBe(true);
    expect(saysLine('Hi, this is Ana.', 'Hi {{name}}, this is Ana')).toBe(true);
    expect(saysLine('Hi Maria, this is Bob.', 'Hi {{name}}, this is Ana')).toBe(false);
  });
});
