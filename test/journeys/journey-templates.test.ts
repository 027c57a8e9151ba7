import { describe, expect, it } from 'vitest';
import {
  chooseBranch,
  CONDITION_OPERATORS_BY_TYPE,
  conditionProblem,
  evaluateCondition,
  type Condition,
} from '../../lib/journeys/conditions';
import type { JourneyDefinition, JourneyNode } from '../../lib/journeys/definition';
import {
  fieldsReadByGraph,
  parseReferences,
  renderTemplate,
  resolvePath,
  undeclaredVariables,
} from '../../lib/journeys/templates';

const at = { x: 0, y: 0 };
const node = (id: string, type: string, data: Record<string, unknown> = {}): JourneyNode => ({
  id,
  type,
  position: at,
  data,
});
const journey = (...nodes: JourneyNode[]): JourneyDefinition => ({ definitionVersion: 1, nodes, edges: [] });

const variables = {
  start: {
    phone: '+14155550100',
    name: 'Ada',
    fields: { plan: 'premium', age: '42', tags: ['a', 'b'], address: { city: 'Paris' } },
  },
  n3: { outcome: 'answered', attempts: 2 },
  n5: { status: 200, body: { customer: { tier: 'gold', active: true } } },
  'call-1': { outcome: 'busy' },
};

describe('template references', () => {
  it('reads paths, with optional spaces and a trailing "?" for optional ones', () => {
    expect(parseReferences('Hi {{start.name}}, {{ n3.outcome? }} and {{n5.body.customer.tier}}')).toEqual([
      { path: 'start.name', optional: false, raw: '{{start.name}}' },
      { path: 'n3.outcome', optional: true, raw: '{{ n3.outcome? }}' },
      { path: 'n5.body.customer.tier', optional: false, raw: '{{n5.body.customer.tier}}' },
    ]);
    expect(parseReferences('{{call-1.outcome}}{{_x}}')).toEqual([
      { path: 'call-1.outcome', optional: false, raw: '{{call-1.outcome}}' },
      { path: '_x', optional: false, raw: '{{_x}}' },
    ]);
  });

  it('ignores malformed braces', () => {
    for (const text of [
      '{{}}',
      '{{ }}',
      '{start.name}',
      '{{start.name}',
      '{ {start.name} }',
      '{{start name}}',
      '{{start..name}}',
      '{{.start}}',
      '{{start.}}',
      '{{3.outcome}}',
      '{{start.name??}}',
      '{{{start.name}}}',
      '{{start.name}}}',
      '{{start-name?x}}',
    ]) {
      expect(parseReferences(text), text).toEqual([]);
    }
  });

  it('renders values found in the variable tree, objects and arrays as JSON', () => {
    expect(renderTemplate('Hi {{start.name}} ({{ start.fields.plan }}), called {{n3.attempts}} times', variables)).toBe(
      'Hi Ada (premium), called 2 times',
    );
    expect(renderTemplate('{{n5.body.customer}}|{{start.fields.tags}}|{{n5.body.customer.active}}', variables)).toBe(
      '{"tier":"gold","active":true}|["a","b"]|true',
    );
    expect(renderTemplate('{{call-1.outcome}}', variables)).toBe('busy');
  });

  it('renders missing values as empty text, optional or not, and leaves malformed braces as they are', () => {
    expect(
      renderTemplate(
        '[{{n9.outcome?}}][{{n9.outcome}}][{{start.name.first}}][{{start.fields.tags.length}}]',
        variables,
      ),
    ).toBe('[][][][]');
    expect(renderTemplate('{{start.name}', variables)).toBe('{{start.name}');
    expect(renderTemplate('{{{start.name}}}', variables)).toBe('{{{start.name}}}');
    expect(renderTemplate('{{x}}', { x: null })).toBe('');
    expect(renderTemplate('{{x}} {{y}}', { x: 0, y: false })).toBe('0 false');
  });

  it('resolves own properties of objects only', () => {
    expect(resolvePath(variables, 'start.fields.address.city')).toBe('Paris');
    expect(resolvePath(variables, 'start')).toBe(variables.start);
    expect(resolvePath(variables, 'start.fields.constructor')).toBeUndefined();
    expect(resolvePath(variables, '__proto__')).toBeUndefined();
    expect(resolvePath(variables, 'start.fields.tags.length')).toBeUndefined();
    expect(resolvePath(variables, 'n3.outcome.length')).toBeUndefined();
  });
});

describe('lead fields a graph reads', () => {
  const graph = journey(
    node('n1', 'start', {
      fields: [
        { name: 'plan', type: 'string' },
        { name: 'unused', type: 'string' },
      ],
    }),
    node('n2', 'call', { message: 'About {{start.fields.plan}} and {{ start.fields.address.city? }}' }),
    node('n3', 'branch', {
      rules: [{ handle: 'old', when: { variable: 'start.fields.age', operator: 'gt', value: 60 } }],
      defaultHandle: 'young',
    }),
    node('n4', 'webhook', {
      url: 'https://crm.example.com',
      headers: { Authorization: 'Bearer {{start.fields.token}}' },
    }),
    node('n5', 'set_variable', { value: '{{start.name}} {{n2.outcome}}' }),
  );

  it('collects every start.fields name referenced, branch conditions and header values included', () => {
    expect([...fieldsReadByGraph(graph)].sort()).toEqual(['address', 'age', 'plan', 'token']);
  });

  it('still finds references in data a node type refuses', () => {
    const broken = journey(
      node('n1', 'whatsapp', { templateName: 'x', parameters: ['{{start.fields.coupon}}'], colour: 'red' }),
      node('n2', 'fax', { to: '{{start.fields.fax}}' }),
    );
    expect([...fieldsReadByGraph(broken)].sort()).toEqual(['coupon', 'fax']);
  });

  it('lists the lead fields the graph never reads, sorted', () => {
    expect(undeclaredVariables(graph, { zip: '75001', plan: 'premium', age: 30, unused: 'x', email: 'a@b.c' })).toEqual(
      ['email', 'unused', 'zip'],
    );
    expect(undeclaredVariables(graph, { plan: 'premium' })).toEqual([]);
  });

  it('lists none when a template reads all the lead fields at once', () => {
    const whole = journey(
      node('n1', 'start'),
      node('n2', 'webhook', { url: 'https://example.com', body: '{{start.fields}}' }),
    );
    expect(undeclaredVariables(whole, { zip: '75001' })).toEqual([]);
  });
});

describe('branch conditions', () => {
  const holds = (variable: string, operator: string, value?: Condition['value']) =>
    evaluateCondition({ variable, operator, value }, variables);

  it('offers the operators of each type', () => {
    expect(CONDITION_OPERATORS_BY_TYPE).toEqual({
      string: ['equals', 'not_equals', 'contains', 'starts_with', 'in', 'is_empty', 'is_not_empty'],
      number: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'is_empty', 'is_not_empty'],
      boolean: ['is_true', 'is_false'],
      datetime: ['before', 'after', 'is_empty', 'is_not_empty'],
      enum: ['equals', 'not_equals', 'in'],
      object: ['is_empty', 'is_not_empty'],
      array: ['is_empty', 'is_not_empty'],
    });
  });

  it('compares text', () => {
    expect(holds('start.fields.plan', 'equals', 'premium')).toBe(true);
    expect(holds('start.fields.plan', 'equals', 'Premium')).toBe(false);
    expect(holds('start.fields.plan', 'not_equals', 'basic')).toBe(true);
    expect(holds('start.fields.missing', 'not_equals', 'basic')).toBe(true);
    expect(holds('start.fields.missing', 'equals', 'basic')).toBe(false);
    expect(holds('start.fields.plan', 'contains', 'emi')).toBe(true);
    expect(holds('start.fields.plan', 'starts_with', 'pre')).toBe(true);
    expect(holds('start.fields.plan', 'starts_with', 'mium')).toBe(false);
    expect(holds('start.fields.address', 'contains', 'Paris')).toBe(false);
  });

  it('tests membership with in, numbers matched as text', () => {
    expect(holds('n3.outcome', 'in', ['busy', 'answered'])).toBe(true);
    expect(holds('n3.outcome', 'in', ['busy', 'no_answer'])).toBe(false);
    expect(holds('n3.attempts', 'in', ['1', '2'])).toBe(true);
    expect(holds('n9.outcome', 'in', ['busy'])).toBe(false);
    expect(holds('n3.outcome', 'in', 'answered')).toBe(false);
  });

  it('compares numbers numerically, numeric text included', () => {
    expect(holds('start.fields.age', 'gt', 40)).toBe(true);
    expect(holds('start.fields.age', 'gt', 42)).toBe(false);
    expect(holds('start.fields.age', 'gte', 42)).toBe(true);
    expect(holds('start.fields.age', 'lt', '100')).toBe(true);
    expect(holds('start.fields.age', 'lte', 41.5)).toBe(false);
    expect(holds('start.fields.age', 'eq', '42.0')).toBe(true);
    expect(holds('n3.attempts', 'neq', 3)).toBe(true);
    expect(holds('n3.attempts', 'neq', 2)).toBe(false);
    expect(holds('start.fields.plan', 'gt', 0)).toBe(false);
    expect(holds('start.fields.plan', 'lt', 0)).toBe(false);
    expect(evaluateCondition({ variable: 'x', operator: 'lt', value: 1 }, { x: '' })).toBe(false);
    expect(holds('start.fields.missing', 'neq', 3)).toBe(true);
  });

  it('tells empty from set', () => {
    const empty = { blank: '  ', none: null, list: [], map: {}, zero: 0, no: false };
    for (const name of ['blank', 'none', 'list', 'map', 'unset'])
      expect(evaluateCondition({ variable: name, operator: 'is_empty' }, empty), name).toBe(true);
    for (const name of ['zero', 'no'])
      expect(evaluateCondition({ variable: name, operator: 'is_not_empty' }, empty), name).toBe(true);
    expect(holds('start.fields.tags', 'is_not_empty')).toBe(true);
  });

  it('reads booleans, and their text', () => {
    expect(holds('n5.body.customer.active', 'is_true')).toBe(true);
    expect(holds('n5.body.customer.active', 'is_false')).toBe(false);
    expect(evaluateCondition({ variable: 'x', operator: 'is_true' }, { x: 'TRUE' })).toBe(true);
    expect(evaluateCondition({ variable: 'x', operator: 'is_false' }, { x: 'false' })).toBe(true);
    expect(evaluateCondition({ variable: 'x', operator: 'is_true' }, {})).toBe(false);
    expect(evaluateCondition({ variable: 'x', operator: 'is_false' }, {})).toBe(false);
  });

  it('compares date-times as instants, whatever their offsets', () => {
    const at9 = { wokeAt: '2026-03-01T09:00:00+01:00' }; // 08:00Z
    expect(evaluateCondition({ variable: 'wokeAt', operator: 'before', value: '2026-03-01T08:30:00Z' }, at9)).toBe(
      true,
    );
    expect(evaluateCondition({ variable: 'wokeAt', operator: 'after', value: '2026-03-01T08:30:00Z' }, at9)).toBe(
      false,
    );
    expect(evaluateCondition({ variable: 'wokeAt', operator: 'after', value: '2026-03-01' }, at9)).toBe(true);
    // Without an offset the instant would depend on the host's zone: never matches.
    expect(evaluateCondition({ variable: 'wokeAt', operator: 'before', value: '2026-03-01T08:30:00' }, at9)).toBe(
      false,
    );
    expect(evaluateCondition({ variable: 'wokeAt', operator: 'before', value: '2027-01-01' }, {})).toBe(false);
  });

  it('reads a variable marked optional by its path without the "?", and matches nothing for unknown operators', () => {
    expect(holds('n3.outcome?', 'equals', 'answered')).toBe(true);
    expect(holds('n3.outcome', 'like', 'answered')).toBe(false);
  });

  it('takes the first rule that matches, else the default', () => {
    const data = {
      rules: [
        { handle: 'vip', when: { variable: 'n5.body.customer.tier', operator: 'in', value: ['gold', 'platinum'] } },
        { handle: 'reached', when: { variable: 'n3.outcome', operator: 'equals', value: 'answered' } },
      ],
      defaultHandle: 'other',
    };
    expect(chooseBranch(data, variables)).toBe('vip');
    expect(chooseBranch(data, { ...variables, n5: { status: 404, body: {} } })).toBe('reached');
    expect(chooseBranch(data, { start: variables.start })).toBe('other');
  });

  it('explains a condition that does not fit its variable', () => {
    const outcome = { type: 'enum' as const, allowedValues: ['answered', 'busy'] };
    expect(conditionProblem({ variable: 'n3.outcome', operator: 'equals', value: 'answered' }, outcome)).toBeNull();
    expect(conditionProblem({ variable: 'n3.outcome', operator: 'bigger', value: 1 }, outcome)).toBe(
      'unknown operator "bigger"',
    );
    expect(conditionProblem({ variable: 'n3.outcome', operator: 'gt', value: 1 }, outcome)).toBe(
      'operator "gt" does not apply to n3.outcome (enum); use one of equals, not_equals, in',
    );
    expect(conditionProblem({ variable: 'n3.outcome', operator: 'in', value: ['busy', 'bussy'] }, outcome)).toBe(
      '"bussy" is not a value of n3.outcome; use one of answered, busy',
    );
    expect(conditionProblem({ variable: 'n3.outcome?', operator: 'equals', value: 'nope' }, outcome)).toBe(
      '"nope" is not a value of n3.outcome; use one of answered, busy',
    );
    const text = { type: 'string' as const, allowedValues: [] };
    expect(conditionProblem({ variable: 'a', operator: 'in', value: [] }, text)).toBe(
      'operator "in" needs a non-empty list of values',
    );
    expect(conditionProblem({ variable: 'a', operator: 'is_empty', value: 'x' }, text)).toBe(
      'operator "is_empty" takes no value',
    );
    expect(conditionProblem({ variable: 'a', operator: 'equals', value: ['x'] }, text)).toBe(
      'operator "equals" needs a single value',
    );
    expect(conditionProblem({ variable: 'a', operator: 'contains' }, text)).toBe(
      'operator "contains" needs text as value',
    );
    expect(conditionProblem({ variable: 'a', operator: 'gt', value: 'ten' }, undefined)).toBe(
      'operator "gt" needs a number as value',
    );
    expect(conditionProblem({ variable: 'a', operator: 'gt', value: '10' }, undefined)).toBeNull();
    expect(conditionProblem({ variable: 'a', operator: 'before', value: 'tomorrow' }, undefined)).toBe(
      'operator "before" needs an ISO 8601 date, or date-time with offset, as value',
    );
  });
});
