import { simulatedConversation } from '../../simulators/simulated-carrier/conversation';

// The agent and lead of the call intelligence tests (docs/features/call-intelligence.md): a sales script whose
// questions ask for the agent's four extraction fields, one of each type but string, and a lead with a value for each.

export const SALES_SCRIPT = {
  openingLine: 'Hi {{name}}, this is Ana from Acme.',
  questions: [
    'How many seats do you need?',
    'Are you the budget owner?',
    'Which plan suits you?',
    'When can we start?',
  ],
  closing: 'Thanks, goodbye.',
};

export const SALES_FIELDS = [
  { name: 'seats', type: 'number', description: '' },
  { name: 'budget_owner', type: 'boolean', description: '' },
  { name: 'plan', type: 'enum', description: '', allowedValues: ['starter', 'growth'] },
  { name: 'start_date', type: 'date', description: '' },
];

export const SALES_LEAD = {
  name: 'Maria',
  fields: { seats: 25, budget_owner: true, plan: 'growth', start_date: '2027-01-15' },
};

/** The simulated conversation of SALES_SCRIPT with SALES_LEAD, answered by a person, 41 s long. */
export const salesConversation = () =>
  simulatedConversation({
    agent: { script: SALES_SCRIPT, extractionFields: SALES_FIELDS, language: 'en-US' },
    lead: SALES_LEAD,
    answeredBy: 'human',
    durationMs: 41_000,
    seed: 'seed-1',
  });
