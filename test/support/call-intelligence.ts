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
