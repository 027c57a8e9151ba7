import { describe, expect, it } from 'vitest';
import {
  journeyDefinitionSchema,
  NODE_TYPE_SPECS,
  NODE_TYPES,
  parseNodeData,
  type NodeType,
} from '../../lib/journeys/definition';
import { describedPaths, descriptor } from '../../lib/journeys/descriptor';

const at = { x: 0, y: 0 };

function issuesOf(type: NodeType, data: unknown): string[] {
  const parsed = NODE_TYPE_SPECS[type].dataSchema.safeParse(data);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

function parse(type: NodeType, data: unknown): any {
  return NODE_TYPE_SPECS[type].dataSchema.parse(data);
}

describe('the journey body shape', () => {
  const body = {
    definitionVersion: 1,
    nodes: [
      { id: 'n1', type: 'start', position: at },
      { id: 'n2', type: 'end', position: { x: 10.5, y: -3 }, data: { outcome: 'done' } },
    ],
    edges: [{ id: 'e1', source: 'n1', target: 'n2' }],
  };

  it("accepts a definition and defaults a node's data to {}", () => {
    const parsed = journeyDefinitionSchema.parse(body);
    expect(parsed.nodes[0]!.data).toEqual({});
    expect(parsed.nodes[1]!.data).toEqual({ outcome: 'done' });
    expect(parsed.edges[0]!.sourceHandle).toBeUndefined();
  });

  it('leaves unknown node types to the validator', () => {
    expect(
      journeyDefinitionSchema.safeParse({ ...body, nodes: [{ id: 'n1', type: 'fax', position: at }] }).success,
    ).toBe(true);
  });

  it('knows only definitionVersion 1', () => {
    const parsed = journeyDefinitionSchema.safeParse({ ...body, definitionVersion: 2 });
    expect(parsed.error?.issues.map((issue) => issue.message)).toEqual(['must be 1']);
  });

  it('refuses node ids that could not be read as variable names', () => {
    for (const id of ['1abc', '', 'n 1', 'n.1', '_n', 'x'.repeat(65)]) {
      expect(
        journeyDefinitionSchema.safeParse({ ...body, nodes: [{ id, type: 'start', position: at }] }).success,
        id,
      ).toBe(false);
    }
    for (const id of ['n1', 'call-1', 'Call_2', 'x'.repeat(64)]) {
      expect(
        journeyDefinitionSchema.safeParse({ ...body, nodes: [{ id, type: 'start', position: at }] }).success,
        id,
      ).toBe(true);
    }
  });

  it('caps a journey at 200 nodes and 400 edges', () => {
    const nodes = (count: number) =>
      Array.from({ length: count }, (_, index) => ({ id: `n${index}`, type: 'wait', position: at }));
    const edges = (count: number) =>
      Array.from({ length: count }, (_, index) => ({ id: `e${index}`, source: 'n0', target: 'n1' }));
    expect(journeyDefinitionSchema.safeParse({ ...body, nodes: nodes(200), edges: edges(400) }).success).toBe(true);
    expect(journeyDefinitionSchema.safeParse({ ...body, nodes: nodes(201) }).success).toBe(false);
    expect(journeyDefinitionSchema.safeParse({ ...body, edges: edges(401) }).success).toBe(false);
  });

  it('needs positions, and data as an object', () => {
    expect(journeyDefinitionSchema.safeParse({ ...body, nodes: [{ id: 'n1', type: 'start' }] }).success).toBe(false);
    expect(
      journeyDefinitionSchema.safeParse({ ...body, nodes: [{ id: 'n1', type: 'start', position: at, data: [] }] })
        .success,
    ).toBe(false);
  });
});

describe('the node type registry', () => {
  it('has one spec per node type, named after it', () => {
    expect(Object.keys(NODE_TYPE_SPECS).sort()).toEqual([...NODE_TYPES].sort());
    for (const type of NODE_TYPES) expect(NODE_TYPE_SPECS[type].type).toBe(type);
    expect(NODE_TYPE_SPECS.call.label).toBe('Place a call');
  });

  it('marks only wait and review as waiting', () => {
    expect(NODE_TYPES.filter((type) => NODE_TYPE_SPECS[type].isWait)).toEqual(['wait', 'review']);
  });

  it('treats inherited property names as unknown types, not as specs', () => {
    for (const type of ['constructor', 'toString', '__proto__']) {
      const parsed = parseNodeData({ id: 'n1', type, position: at, data: {} });
      expect(parsed).toEqual({ ok: false, spec: null, issues: [] });
    }
  });

  it('refuses keys a type does not know', () => {
    for (const type of NODE_TYPES) {
      const valid: Record<NodeType, unknown> = {
        start: {},
        end: {},
        call: {},
        whatsapp: { templateName: 'welcome' },
        wait: { seconds: 60 },
        branch: { rules: [{ handle: 'a', when: { variable: 'n1.x', operator: 'is_empty' } }], defaultHandle: 'b' },
        set_variable: { value: 'x' },
        webhook: { url: 'https://example.com' },
        review: { instructions: 'Check it.' },
      };
      expect(issuesOf(type, valid[type]), type).toEqual([]);
      expect(issuesOf(type, { ...(valid[type] as object), label: 'x' }), type).toEqual([': Unrecognized key: "label"']);
    }
  });
});

describe('node data and outputs', () => {
  it('start: declared lead fields under an open start.fields, beside phone and name', () => {
    const data = parse('start', {
      fields: [
        { name: 'plan', type: 'string', description: 'Plan bought', required: true },
        { name: 'age', type: 'number' },
      ],
    });
    const output = NODE_TYPE_SPECS.start.output(data, 'n1')!;
    expect(output.name).toBe('start');
    expect(
      describedPaths(output).map(
        ({ path, descriptor: variable }) => `${path}:${variable.type}${variable.open ? ':open' : ''}`,
      ),
    ).toEqual([
      'start:object',
      'start.phone:string',
      'start.name:string',
      'start.fields:object:open',
      'start.fields.plan:string',
      'start.fields.age:number',
    ]);
    expect(output.children[2]!.children[0]!.description).toBe('Plan bought');
    expect(NODE_TYPE_SPECS.start.templates(data)).toEqual([]);
  });

  it('start: field names are identifiers, declared once, of a scalar type', () => {
    expect(
      issuesOf('start', {
        fields: [
          { name: 'plan', type: 'string' },
          { name: 'plan', type: 'number' },
        ],
      }),
    ).toEqual(['fields.1.name: duplicate field "plan"']);
    expect(issuesOf('start', { fields: [{ name: 'first name', type: 'string' }] })).toEqual([
      'fields.0.name: a letter or "_", then letters, digits or "_"',
    ]);
    expect(issuesOf('start', { fields: [{ name: 'tags', type: 'array' }] })).toHaveLength(1);
  });

  it('end: produces nothing', () => {
    expect(NODE_TYPE_SPECS.end.output(parse('end', { outcome: 'converted' }), 'n9')).toBeNull();
    expect(issuesOf('end', { outcome: '' })).toHaveLength(1);
  });

  it('call: outcome, attempts, duration and call id; the message is a template', () => {
    const data = parse('call', { agentId: 'agent-7', message: 'Hello {{start.name}}' });
    const output = NODE_TYPE_SPECS.call.output(data, 'n2')!;
    expect(output.name).toBe('n2');
    expect(output.children.map((child) => `${child.name}:${child.type}`)).toEqual([
      'outcome:enum',
      'attempts:number',
      'durationMs:number',
      'callId:string',
    ]);
    expect(output.children[0]!.allowedValues).toEqual([
      'answered',
      'busy',
      'no_answer',
      'voicemail',
      'voicemail_left',
      'failed',
      'invalid_number',
      'opted_out',
      'callback_requested',
      'transferred',
      'appointment_booked',
      'do_not_call',
      'cancelled',
    ]);
    expect(NODE_TYPE_SPECS.call.templates(data)).toEqual(['Hello {{start.name}}']);
    expect(NODE_TYPE_SPECS.call.templates(parse('call', {}))).toEqual([]);
  });

  it('whatsapp: language defaults to en, parameters to none; each parameter is a template', () => {
    expect(parse('whatsapp', { templateName: 'welcome' })).toEqual({
      templateName: 'welcome',
      language: 'en',
      parameters: [],
    });
    const data = parse('whatsapp', {
      templateName: 'welcome',
      language: 'pt_BR',
      parameters: ['{{start.name}}', 'plan {{start.fields.plan}}'],
    });
    expect(NODE_TYPE_SPECS.whatsapp.templates(data)).toEqual(['{{start.name}}', 'plan {{start.fields.plan}}']);
    expect(
      NODE_TYPE_SPECS.whatsapp.output(data, 'n4')!.children.map((child) => [child.name, child.allowedValues]),
    ).toEqual([
      ['messageId', []],
      ['status', ['sent', 'failed']],
    ]);
    expect(issuesOf('whatsapp', { templateName: 'welcome', language: 'English' })).toEqual([
      'language: a language code such as en or pt_BR',
    ]);
    expect(issuesOf('whatsapp', { language: 'en' })).toHaveLength(1);
  });

  it('wait: exactly one of seconds (1 s to a year) or until (HH:MM)', () => {
    expect(issuesOf('wait', { seconds: 1 })).toEqual([]);
    expect(issuesOf('wait', { seconds: 31_536_000 })).toEqual([]);
    expect(issuesOf('wait', { until: '09:30' })).toEqual([]);
    expect(issuesOf('wait', { seconds: 0 })).toEqual(['seconds: Too small: expected number to be >=1']);
    expect(issuesOf('wait', { seconds: 31_536_001 })).toEqual(['seconds: Too big: expected number to be <=31536000']);
    expect(issuesOf('wait', { seconds: 1.5 })).toEqual(['seconds: Invalid input: expected int, received number']);
    expect(issuesOf('wait', { until: '24:00' })).toEqual(['until: HH:MM, 24-hour']);
    expect(issuesOf('wait', {})).toEqual([': set exactly one of seconds or until']);
    expect(issuesOf('wait', { seconds: 60, until: '09:00' })).toEqual([': set exactly one of seconds or until']);
    expect(
      NODE_TYPE_SPECS.wait
        .output(parse('wait', { until: '09:00' }), 'n5')!
        .children.map((child) => `${child.name}:${child.type}`),
    ).toEqual(['wokeAt:datetime']);
  });

  it('branch: 1 to 20 rules with distinct handles; each condition reads its variable as a reference', () => {
    const rule = (handle: string, variable = 'n2.outcome') => ({
      handle,
      when: { variable, operator: 'equals', value: 'answered' },
    });
    const data = parse('branch', {
      rules: [rule('yes'), rule('vip', 'start.fields.plan'), rule('maybe', 'n2.outcome?')],
      defaultHandle: 'no',
    });
    expect(NODE_TYPE_SPECS.branch.templates(data)).toEqual([
      '{{n2.outcome}}',
      '{{start.fields.plan}}',
      '{{n2.outcome?}}',
    ]);
    expect(NODE_TYPE_SPECS.branch.output(data, 'n3')!.children.map((child) => `${child.name}:${child.type}`)).toEqual([
      'matched:string',
    ]);
    expect(issuesOf('branch', { rules: [], defaultHandle: 'no' })).toHaveLength(1);
    expect(
      issuesOf('branch', { rules: Array.from({ length: 21 }, (_, index) => rule(`h${index}`)), defaultHandle: 'no' }),
    ).toHaveLength(1);
    expect(issuesOf('branch', { rules: [rule('a'), rule('a')], defaultHandle: 'no' })).toEqual([
      'rules.1.handle: duplicate handle "a"',
    ]);
    expect(issuesOf('branch', { rules: [rule('a')], defaultHandle: 'a' })).toEqual([
      'defaultHandle: duplicate handle "a"',
    ]);
    expect(issuesOf('branch', { rules: [rule('a', '{{n2.outcome}}')], defaultHandle: 'b' })).toEqual([
      'rules.0.when.variable: a variable path such as start.fields.plan or n3.outcome',
    ]);
    expect(
      issuesOf('branch', {
        rules: [{ handle: 'a', when: { variable: 'n2.x', operator: 'in', value: [1] } }],
        defaultHandle: 'b',
      }),
    ).toHaveLength(1);
  });

  it('set_variable: a rendered value of the declared type, string by default', () => {
    expect(parse('set_variable', { value: '{{start.name}}' })).toEqual({
      value: '{{start.name}}',
      valueType: 'string',
    });
    const numeric = parse('set_variable', { value: '{{n2.attempts}}', valueType: 'number' });
    expect(
      NODE_TYPE_SPECS.set_variable.output(numeric, 'n6')!.children.map((child) => `${child.name}:${child.type}`),
    ).toEqual(['value:number']);
    expect(NODE_TYPE_SPECS.set_variable.templates(numeric)).toEqual(['{{n2.attempts}}']);
    expect(issuesOf('set_variable', { value: 'x', valueType: 'datetime' })).toHaveLength(1);
  });

  it('webhook: an http(s) URL, POST by default; URL, header values and body are templates; the body is open', () => {
    const data = parse('webhook', {
      url: 'https://crm.example.com/leads/{{start.fields.crmId}}',
      headers: { 'X-Api-Key': '{{start.fields.key}}' },
      body: '{"phone":"{{start.phone}}"}',
    });
    expect(data.method).toBe('POST');
    expect(NODE_TYPE_SPECS.webhook.templates(data)).toEqual([
      'https://crm.example.com/leads/{{start.fields.crmId}}',
      '{{start.fields.key}}',
      '{"phone":"{{start.phone}}"}',
    ]);
    const output = NODE_TYPE_SPECS.webhook.output(data, 'n7')!;
    expect(output.children.map((child) => `${child.name}:${child.type}:${child.open}`)).toEqual([
      'status:number:false',
      'body:object:true',
    ]);
    expect(issuesOf('webhook', { url: '{{start.fields.callbackUrl}}', method: 'GET' })).toEqual([]);
    expect(issuesOf('webhook', { url: 'ftp://example.com' })).toEqual([
      'url: must start with http:// or https:// (or a {{reference}} rendering to such a URL)',
    ]);
    expect(issuesOf('webhook', { url: 'https://example.com', method: 'HEAD' })).toHaveLength(1);
    expect(issuesOf('webhook', { url: 'https://example.com', headers: { 'Bad Header': 'x' } })).toHaveLength(1);
  });

  it('review: a decision, a note and who decided; instructions are required', () => {
    const output = NODE_TYPE_SPECS.review.output(parse('review', { instructions: 'Approve the discount?' }), 'n8')!;
    expect(output.children.map((child) => [child.name, child.type, child.allowedValues])).toEqual([
      ['decision', 'enum', ['approved', 'rejected', 'skipped']],
      ['note', 'string', []],
      ['decidedBy', 'string', []],
    ]);
    expect(issuesOf('review', {})).toHaveLength(1);
    expect(issuesOf('review', { instructions: '' })).toHaveLength(1);
  });
});

describe('variable descriptors', () => {
  it('fills the optional parts with empty defaults', () => {
    expect(descriptor('plan', 'string', 'Plan')).toEqual({
      name: 'plan',
      type: 'string',
      description: 'Plan',
      allowedValues: [],
      open: false,
      children: [],
    });
    expect(descriptor('body', 'object', 'Body', { open: true }).open).toBe(true);
  });
});
