import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../lib/journeys/catalog';
import {
  journeyDefinitionSchema,
  NODE_TYPES,
  type JourneyDefinition,
  type JourneyEdge,
  type JourneyNode,
} from '../../lib/journeys/definition';
import { validateJourney } from '../../lib/journeys/validator';

const at = { x: 0, y: 0 };
const node = (id: string, type: string, data: Record<string, unknown> = {}): JourneyNode => ({
  id,
  type,
  position: at,
  data,
});
const edge = (source: string, target: string, sourceHandle?: string): JourneyEdge =>
  sourceHandle
    ? { id: `${source}-${target}-${sourceHandle}`, source, target, sourceHandle }
    : { id: `${source}-${target}`, source, target };
const journey = (nodes: JourneyNode[], edges: JourneyEdge[]): JourneyDefinition => ({
  definitionVersion: 1,
  nodes,
  edges,
});

const START = node('n1', 'start', {
  fields: [
    { name: 'plan', type: 'string' },
    { name: 'firstName', type: 'string', required: true },
  ],
});
const END = (id: string, outcome?: string) => node(id, 'end', outcome ? { outcome } : {});
const branch = (
  id: string,
  rules: Array<[handle: string, variable: string, operator: string, value?: unknown]>,
  defaultHandle: string,
) =>
  node(id, 'branch', {
    rules: rules.map(([handle, variable, operator, value]) => ({
      handle,
      when: { variable, operator, ...(value === undefined ? {} : { value }) },
    })),
    defaultHandle,
  });
const onPlan = (id: string) => branch(id, [['premium', 'start.fields.plan', 'equals', 'premium']], 'basic');

describe('valid journeys', () => {
  it('call, branch on the outcome, WhatsApp on answer, retry after a wait, give up after three attempts', () => {
    expect(
      validateJourney(
        journey(
          [
            START,
            node('n2', 'call', {
              agentId: 'agent-sales',
              message:
                'Greet {{start.fields.firstName}}; they bought {{ start.fields.plan }}. Last try woke at {{n7.wokeAt?}}',
            }),
            branch(
              'n3',
              [
                ['answered', 'n2.outcome', 'equals', 'answered'],
                ['stop', 'n2.outcome', 'in', ['do_not_call', 'invalid_number']],
                ['gave_up', 'n2.attempts', 'gte', 3],
              ],
              'retry',
            ),
            node('n4', 'whatsapp', {
              templateName: 'thanks_for_your_time',
              language: 'en_US',
              parameters: ['{{start.name}}', '{{n2.outcome}}'],
            }),
            END('n5', 'reached'),
            END('n6', 'unreachable'),
            node('n7', 'wait', { seconds: 7200 }),
          ],
          [
            edge('n1', 'n2'),
            edge('n2', 'n3'),
            edge('n3', 'n4', 'answered'),
            edge('n3', 'n6', 'stop'),
            edge('n3', 'n6', 'gave_up'),
            edge('n3', 'n7', 'retry'),
            edge('n4', 'n5'),
            edge('n7', 'n2'),
          ],
        ),
      ),
    ).toEqual([]);
  });

  it('enrich the lead from a CRM webhook, then call only qualified leads', () => {
    expect(
      validateJourney(
        journey(
          [
            START,
            node('n2', 'webhook', {
              url: 'https://crm.example.com/leads?phone={{start.phone}}',
              method: 'POST',
              headers: { Authorization: 'Bearer {{start.fields.crmToken}}', 'Content-Type': 'application/json' },
              body: '{"phone":"{{start.phone}}","plan":"{{start.fields.plan}}"}',
            }),
            branch(
              'n3',
              [
                ['qualified', 'n2.body.lead.qualified', 'is_true'],
                ['failed', 'n2.status', 'gte', 400],
              ],
              'skip',
            ),
            node('n4', 'call', { message: 'Their score is {{n2.body.lead.score}} ({{n2.status}}): {{n2.body}}' }),
            END('n5'),
          ],
          [
            edge('n1', 'n2'),
            edge('n2', 'n3'),
            edge('n3', 'n4', 'qualified'),
            edge('n3', 'n5', 'failed'),
            edge('n3', 'n5', 'skip'),
            edge('n4', 'n5'),
          ],
        ),
      ),
    ).toEqual([]);
  });

  it('prepare an offer, have a human review it, send it if approved', () => {
    expect(
      validateJourney(
        journey(
          [
            START,
            node('n2', 'set_variable', { value: 'Offer for {{start.name}}: {{start.fields.plan}} at 20% off' }),
            node('n3', 'review', { instructions: 'Check the offer before it is sent.' }),
            branch('n4', [['approved', 'n3.decision', 'equals', 'approved']], 'otherwise'),
            node('n5', 'whatsapp', { templateName: 'offer', parameters: ['{{n2.value}}', '{{n3.note}}'] }),
            END('n6', 'offered'),
            END('n7', 'not_offered'),
          ],
          [
            edge('n1', 'n2'),
            edge('n2', 'n3'),
            edge('n3', 'n4'),
            edge('n4', 'n5', 'approved'),
            edge('n4', 'n7', 'otherwise'),
            edge('n5', 'n6'),
          ],
        ),
      ),
    ).toEqual([]);
  });

  it('wait until a time of day, then call', () => {
    expect(
      validateJourney(
        journey(
          [START, node('n2', 'wait', { until: '09:30' }), node('n3', 'call'), END('n4')],
          [edge('n1', 'n2'), edge('n2', 'n3'), edge('n3', 'n4')],
        ),
      ),
    ).toEqual([]);
  });

  it('read a variable set on one branch only where it is marked optional, in templates and conditions', () => {
    expect(
      validateJourney(
        journey(
          [
            START,
            onPlan('n2'),
            node('n3', 'call'),
            node('n4', 'webhook', {
              url: 'https://crm.example.com/callbacks/{{start.fields.callbackId}}?plan={{start.fields.plan}}',
              body: '{"outcome":"{{n3.outcome?}}","attempts":"{{ n3.attempts? }}"}',
            }),
            branch('n5', [['called', 'n3.outcome?', 'in', ['answered']]], 'not_called'),
            END('n6'),
          ],
          [
            edge('n1', 'n2'),
            edge('n2', 'n3', 'premium'),
            edge('n2', 'n4', 'basic'),
            edge('n3', 'n4'),
            edge('n4', 'n5'),
            edge('n5', 'n6', 'called'),
            edge('n5', 'n6', 'not_called'),
          ],
        ),
      ),
    ).toEqual([]);
  });

  it('loop through a review rather than a wait', () => {
    expect(
      validateJourney(
        journey(
          [
            START,
            node('n2', 'review', { instructions: 'Anything left to do?' }),
            branch('n3', [['again', 'n2.decision', 'equals', 'rejected']], 'done'),
            END('n4'),
          ],
          [edge('n1', 'n2'), edge('n2', 'n3'), edge('n3', 'n2', 'again'), edge('n3', 'n4', 'done')],
        ),
      ),
    ).toEqual([]);
  });
});

describe('graph rules', () => {
  const problems = (nodes: JourneyNode[], edges: JourneyEdge[]) => validateJourney(journey(nodes, edges));

  it('exactly one start node', () => {
    expect(problems([node('n2', 'call'), END('n3')], [edge('n2', 'n3')])).toEqual(['the journey has no start node']);
    expect(problems([START, node('n2', 'start'), END('n3')], [edge('n1', 'n3'), edge('n2', 'n3')])).toEqual([
      'the journey has 2 start nodes ("n1", "n2"); it needs exactly one',
    ]);
  });

  it('unique node ids', () => {
    expect(
      problems(
        [START, node('n2', 'call'), node('n2', 'wait', { seconds: 5 }), END('n3')],
        [edge('n1', 'n2'), edge('n2', 'n3')],
      ),
    ).toEqual(['node "n2": id used by 2 nodes']);
  });

  it('unique edge ids', () => {
    expect(
      problems(
        [START, node('n2', 'call'), END('n3')],
        [
          { ...edge('n1', 'n2'), id: 'e1' },
          { ...edge('n2', 'n3'), id: 'e1' },
        ],
      ),
    ).toEqual(['edge "e1": id used by 2 edges']);
  });

  it('edges between existing nodes', () => {
    expect(
      problems(
        [START, node('n2', 'call'), END('n3')],
        [
          edge('n1', 'n2'),
          edge('n2', 'n3'),
          { id: 'e3', source: 'n2', target: 'n9' },
          { id: 'e4', source: 'n8', target: 'n3' },
        ],
      ),
    ).toEqual(['edge "e3": target "n9" is not a node', 'edge "e4": source "n8" is not a node']);
  });

  it('nothing leads into the start node', () => {
    expect(
      problems(
        [START, onPlan('n2'), node('n4', 'wait', { seconds: 60 }), END('n3')],
        [edge('n1', 'n2'), edge('n2', 'n4', 'premium'), edge('n2', 'n3', 'basic'), edge('n4', 'n1')],
      ),
    ).toEqual(['node "n1": a start node cannot have incoming edges ("n4-n1")']);
  });

  it('nothing leaves an end node', () => {
    expect(problems([START, END('n2'), END('n3')], [edge('n1', 'n2'), edge('n2', 'n3')])).toEqual([
      'node "n2": an end node cannot have outgoing edges ("n2-n3")',
    ]);
  });

  it('at least one end node', () => {
    expect(problems([START, node('n2', 'call')], [edge('n1', 'n2')])).toEqual(['the journey has no end node']);
  });

  it('every node reachable from the start', () => {
    expect(
      problems(
        [START, node('n2', 'call'), END('n3'), node('n5', 'wait', { seconds: 60 })],
        [edge('n1', 'n2'), edge('n2', 'n3'), edge('n5', 'n3')],
      ),
    ).toEqual(['node "n5" is not reachable from the start node']);
  });

  it('an end node reachable from every node', () => {
    expect(
      problems(
        [START, onPlan('n2'), END('n3'), node('n4', 'wait', { seconds: 60 }), node('n6', 'call')],
        [edge('n1', 'n2'), edge('n2', 'n3', 'premium'), edge('n2', 'n4', 'basic'), edge('n4', 'n6')],
      ),
    ).toEqual(['node "n4" cannot reach an end node', 'node "n6" cannot reach an end node']);
  });

  it('no cycle without a wait or review node', () => {
    expect(
      problems(
        [
          START,
          node('n2', 'call'),
          branch('n3', [['answered', 'n2.outcome', 'equals', 'answered']], 'retry'),
          END('n4'),
        ],
        [edge('n1', 'n2'), edge('n2', 'n3'), edge('n3', 'n4', 'answered'), edge('n3', 'n2', 'retry')],
      ),
    ).toEqual(['cycle n2 → n3 → n2 has no wait node']);
    expect(
      problems(
        [START, onPlan('n3'), END('n4')],
        [edge('n1', 'n3'), edge('n3', 'n4', 'premium'), edge('n3', 'n3', 'basic')],
      ),
    ).toEqual(['cycle n3 → n3 has no wait node']);
    // The wait on one loop does not excuse the other, inner one.
    expect(
      problems(
        [
          START,
          node('n2', 'call'),
          branch(
            'n3',
            [
              ['answered', 'n2.outcome', 'equals', 'answered'],
              ['busy', 'n2.outcome', 'equals', 'busy'],
            ],
            'later',
          ),
          node('n4', 'wait', { seconds: 60 }),
          END('n5'),
        ],
        [
          edge('n1', 'n2'),
          edge('n2', 'n3'),
          edge('n3', 'n5', 'answered'),
          edge('n3', 'n2', 'busy'),
          edge('n3', 'n4', 'later'),
          edge('n4', 'n2'),
        ],
      ),
    ).toEqual(['cycle n2 → n3 → n2 has no wait node']);
  });

  it('node data valid for its type', () => {
    expect(
      problems([START, node('n2', 'wait', { seconds: 0 }), END('n3')], [edge('n1', 'n2'), edge('n2', 'n3')]),
    ).toEqual(['node "n2" (wait): data.seconds: Too small: expected number to be >=1']);
    expect(
      problems(
        [START, branch('n2', [['a', '{{start.fields.plan}}', 'is_empty']], 'b'), END('n3')],
        [edge('n1', 'n2'), edge('n2', 'n3', 'a'), edge('n2', 'n3', 'b')],
      ),
    ).toEqual([
      'node "n2" (branch): data.rules[0].when.variable: a variable path such as start.fields.plan or n3.outcome',
    ]);
    expect(
      problems(
        [START, node('n2', 'whatsapp', { language: 'en', colour: 'green' }), END('n3')],
        [edge('n1', 'n2'), edge('n2', 'n3')],
      ),
    ).toEqual([
      'node "n2" (whatsapp): data.templateName: Invalid input: expected string, received undefined',
      'node "n2" (whatsapp): data: Unrecognized key: "colour"',
    ]);
  });

  it('a webhook URL whose scheme or host is a reference (lead data would choose what the worker reaches)', () => {
    const hook = (url: string) =>
      problems([START, node('n2', 'webhook', { url }), END('n3')], [edge('n1', 'n2'), edge('n2', 'n3')]);
    const refused = [
      'node "n2" (webhook): data.url: must start with http:// or https:// and a host written out, without {{references}} (a reference may go in the path or query)',
    ];
    for (const url of [
      '{{start.fields.callbackUrl}}',
      'https://{{start.fields.host}}/hook',
      'https://{{start.fields.plan}}.example.com/',
      'https://crm.example.com:{{start.fields.plan}}/',
      'https://user@{{start.fields.plan}}/',
      'https://',
    ])
      expect(hook(url), url).toEqual(refused);
    for (const url of [
      'https://crm.example.com/leads/{{start.fields.plan}}',
      'http://crm.example.com?plan={{start.fields.plan}}',
      'https://crm.example.com',
      'HTTPS://CRM.EXAMPLE.COM#{{start.fields.plan}}',
    ])
      expect(hook(url), url).toEqual([]);
  });

  it('known node types', () => {
    expect(
      problems([START, node('n4', 'fax', { to: '{{n9.x}}' }), END('n3')], [edge('n1', 'n4'), edge('n4', 'n3')]),
    ).toEqual(['node "n4": unknown node type "fax"']);
    expect(problems([START, node('n4', 'constructor'), END('n3')], [edge('n1', 'n4'), edge('n4', 'n3')])).toEqual([
      'node "n4": unknown node type "constructor"',
    ]);
  });

  it('one edge per branch handle, each with a handle of the branch', () => {
    const nodes = [START, onPlan('n2'), END('n3'), END('n4')];
    expect(problems(nodes, [edge('n1', 'n2'), edge('n2', 'n3', 'premium'), edge('n2', 'n4')])).toEqual([
      'edge "n2-n4": leaves branch node "n2" without a handle; use one of "premium", "basic"',
      'node "n2": handle "basic" has no outgoing edge',
    ]);
    expect(problems(nodes, [edge('n1', 'n2'), edge('n2', 'n3', 'premium'), edge('n2', 'n4', 'gold')])).toEqual([
      'edge "n2-n4-gold": "gold" is not a handle of branch node "n2"',
      'node "n2": handle "basic" has no outgoing edge',
    ]);
    expect(
      problems(nodes, [
        edge('n1', 'n2'),
        edge('n2', 'n3', 'premium'),
        edge('n2', 'n4', 'premium'),
        edge('n2', 'n4', 'basic'),
      ]),
    ).toEqual(['node "n2": handle "premium" has 2 outgoing edges ("n2-n3-premium", "n2-n4-premium")']);
  });

  it('at most one edge out of any other node', () => {
    expect(
      problems(
        [START, node('n2', 'call'), END('n3'), END('n4')],
        [edge('n1', 'n2'), edge('n2', 'n3'), edge('n2', 'n4')],
      ),
    ).toEqual(['node "n2" has 2 outgoing edges ("n2-n3", "n2-n4"); only a branch node may have more than one']);
  });

  it('the id "start" only on the start node, whose output it names', () => {
    expect(problems([START, node('start', 'call'), END('n3')], [edge('n1', 'start'), edge('start', 'n3')])).toEqual([
      'node "start": only the start node may have the id "start"',
    ]);
  });
});

describe('references', () => {
  const linear = (...middle: JourneyNode[]) =>
    journey(
      [START, ...middle, END('n9')],
      [START, ...middle, END('n9')]
        .slice(1)
        .map((next, index, rest) => edge(index === 0 ? 'n1' : rest[index - 1]!.id, next.id)),
    );

  it('to nothing produced before the node', () => {
    expect(validateJourney(linear(node('n4', 'call', { message: '{{n8.outcome}}' })))).toEqual([
      'node "n4": {{n8.outcome}} is not produced by any node before it',
    ]);
    expect(validateJourney(linear(node('n4', 'call', { message: '{{n4.outcome}}' })))).toEqual([
      'node "n4": {{n4.outcome}} is not produced by any node before it',
    ]);
    expect(
      validateJourney(
        linear(node('n4', 'call', { message: '{{n5.messageId?}}' }), node('n5', 'whatsapp', { templateName: 'x' })),
      ),
    ).toEqual(['node "n4": {{n5.messageId?}} is not produced by any node before it']);
  });

  it('below a variable that is not an open object', () => {
    expect(
      validateJourney(
        linear(
          node('n3', 'call'),
          node('n4', 'set_variable', {
            value: '{{n3.outcome.code}} {{start.fields.plan.name}} {{n3.transcript}} {{start.fields.anything}}',
          }),
        ),
      ),
    ).toEqual([
      'node "n4": {{n3.outcome.code}} is not produced by any node before it',
      'node "n4": {{start.fields.plan.name}} is not produced by any node before it',
      'node "n4": {{n3.transcript}} is not produced by any node before it',
    ]);
  });

  it('to a variable set on some paths only, unless marked optional', () => {
    const nodes = (body: string) => [
      START,
      onPlan('n2'),
      node('n3', 'call'),
      node('n7', 'webhook', { url: 'https://example.com', body }),
      END('n8'),
    ];
    const edges = [
      edge('n1', 'n2'),
      edge('n2', 'n3', 'premium'),
      edge('n2', 'n7', 'basic'),
      edge('n3', 'n7'),
      edge('n7', 'n8'),
    ];
    expect(validateJourney(journey(nodes('{{n3.outcome}} {{ n3.outcome }}'), edges))).toEqual([
      'node "n7": {{n3.outcome}} is not set on every path to this node; write {{n3.outcome?}} to read it where set',
    ]);
    expect(validateJourney(journey(nodes('{{n3.outcome?}}'), edges))).toEqual([]);
  });

  it('from branch conditions', () => {
    const nodes = (variable: string) => [
      START,
      onPlan('n2'),
      node('n3', 'call'),
      branch('n7', [['yes', variable, 'equals', 'answered']], 'no'),
      END('n8'),
    ];
    const edges = [
      edge('n1', 'n2'),
      edge('n2', 'n3', 'premium'),
      edge('n2', 'n7', 'basic'),
      edge('n3', 'n7'),
      edge('n7', 'n8', 'yes'),
      edge('n7', 'n8', 'no'),
    ];
    expect(validateJourney(journey(nodes('n3.outcome'), edges))).toEqual([
      'node "n7": {{n3.outcome}} is not set on every path to this node; write {{n3.outcome?}} to read it where set',
    ]);
    expect(validateJourney(journey(nodes('n3.outcome?'), edges))).toEqual([]);
    expect(validateJourney(journey(nodes('n4.outcome'), edges))).toEqual([
      'node "n7": {{n4.outcome}} is not produced by any node before it',
    ]);
  });

  it("not reported again when the producer's data is already wrong, nor from a node that is never reached", () => {
    expect(validateJourney(linear(node('n3', 'wait', {}), node('n4', 'call', { message: '{{n3.wokeAt}}' })))).toEqual([
      'node "n3" (wait): data: set exactly one of seconds or until',
    ]);
    const unreached = journey(
      [START, node('n2', 'call'), END('n3'), node('n5', 'call', { message: '{{n8.x}}' })],
      [edge('n1', 'n2'), edge('n2', 'n3'), edge('n5', 'n3')],
    );
    expect(validateJourney(unreached)).toEqual(['node "n5" is not reachable from the start node']);
  });
});

describe("branch conditions against the variable's type", () => {
  const withRule = (variable: string, operator: string, value?: unknown) =>
    journey(
      [
        START,
        node('n2', 'call'),
        node('n3', 'webhook', { url: 'https://example.com' }),
        branch('n4', [['yes', variable, operator, value]], 'no'),
        END('n5'),
      ],
      [edge('n1', 'n2'), edge('n2', 'n3'), edge('n3', 'n4'), edge('n4', 'n5', 'yes'), edge('n4', 'n5', 'no')],
    );

  it('operators of the type only', () => {
    expect(validateJourney(withRule('n2.outcome', 'gt', 1))).toEqual([
      'node "n4": rule "yes": operator "gt" does not apply to n2.outcome (enum); use one of equals, not_equals, in',
    ]);
    expect(validateJourney(withRule('n2.attempts', 'contains', '1'))).toEqual([
      'node "n4": rule "yes": operator "contains" does not apply to n2.attempts (number); use one of eq, neq, gt, gte, lt, lte, is_empty, is_not_empty',
    ]);
    expect(validateJourney(withRule('n3.body.score', 'bigger', 1))).toEqual([
      'node "n4": rule "yes": unknown operator "bigger"',
    ]);
    expect(validateJourney(withRule('n3.body.score', 'gt', '50'))).toEqual([]);
  });

  it("values an enum can take, and values of the operator's kind", () => {
    expect(validateJourney(withRule('n2.outcome', 'equals', 'anwsered'))).toEqual([
      'node "n4": rule "yes": "anwsered" is not a value of n2.outcome; use one of answered, busy, no_answer, voicemail, voicemail_left, failed, invalid_number, opted_out, callback_requested, transferred, appointment_booked, do_not_call, cancelled',
    ]);
    expect(validateJourney(withRule('n2.attempts', 'gte', 'three'))).toEqual([
      'node "n4": rule "yes": operator "gte" needs a number as value',
    ]);
    expect(validateJourney(withRule('start.fields.plan', 'in', 'premium'))).toEqual([
      'node "n4": rule "yes": operator "in" needs a non-empty list of values',
    ]);
  });
});

describe('a broken structure', () => {
  it('reports what it can, each problem once', () => {
    expect(
      validateJourney(
        journey(
          [node('n2', 'call', { message: '{{n5.x}}' }), node('n2', 'fax'), node('n3', 'wait', { seconds: -1 })],
          [edge('n2', 'n3'), edge('n3', 'n2'), edge('n3', 'n7')],
        ),
      ),
    ).toEqual([
      'node "n2": id used by 2 nodes',
      'node "n2": unknown node type "fax"',
      'node "n3" (wait): data.seconds: Too small: expected number to be >=1',
      'edge "n3-n7": target "n7" is not a node',
      'the journey has no start node',
      'the journey has no end node',
    ]);
  });

  it('never throws on a definition the body schema accepts', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const data = [
      {},
      { seconds: 60 },
      { until: '09:00' },
      { message: '{{n1.outcome}} {{start.fields.x?}}' },
      { templateName: 't', parameters: ['{{n2.status}}'] },
      {
        rules: [{ handle: 'a', when: { variable: 'n1.outcome', operator: 'equals', value: 'answered' } }],
        defaultHandle: 'b',
      },
      { rules: [{ handle: 'a', when: { variable: 'n3.body.x', operator: 'zz' } }], defaultHandle: 'a' },
      { value: '{{n4.value}}', valueType: 'number' },
      { url: 'https://x.test/{{n0.body.id}}' },
      { instructions: 'ok' },
      { fields: [{ name: 'x', type: 'number' }] },
      { seconds: 'soon' },
      { rules: 'none' },
      {
        fields: [
          { name: 'a', type: 'string' },
          { name: 'a', type: 'string' },
        ],
      },
    ];
    for (let round = 0; round < 300; round++) {
      const ids = Array.from({ length: 1 + Math.floor(random() * 8) }, () =>
        pick(['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'start']),
      );
      const definition = journeyDefinitionSchema.parse({
        definitionVersion: 1,
        nodes: ids.map((id) => node(id, pick([...NODE_TYPES, 'start', 'end', 'fax']), pick(data))),
        edges: Array.from({ length: Math.floor(random() * 12) }, (_, index) => ({
          id: pick(['e0', `e${index}`]),
          source: pick([...ids, 'n9']),
          target: pick([...ids, 'n9']),
          ...(random() < 0.5 ? { sourceHandle: pick(['a', 'b', 'c']) } : {}),
        })),
      });
      const problems = validateJourney(definition);
      expect(problems.every((problem) => typeof problem === 'string' && problem.length > 0)).toBe(true);
      if (problems.length === 0) expect(definition.nodes.filter((item) => item.type === 'start')).toHaveLength(1);
      expect(Object.keys(buildCatalog(definition).availabilityByNode).sort()).toEqual([...new Set(ids)].sort());
    }
  });
});
