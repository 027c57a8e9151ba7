import { describe, expect, it } from 'vitest';
import {
  buildCatalog,
  isReferenceAvailable,
  variableDescriptors,
  type VariableCatalog,
} from '../../lib/journeys/catalog';
import { CONDITION_OPERATORS_BY_TYPE } from '../../lib/journeys/conditions';
import type { JourneyDefinition, JourneyEdge, JourneyNode } from '../../lib/journeys/definition';
import { parseReferences } from '../../lib/journeys/templates';

const at = { x: 0, y: 0 };
const node = (id: string, type: string, data: Record<string, unknown> = {}): JourneyNode => ({
  id,
  type,
  position: at,
  data,
});
const edge = (source: string, target: string, sourceHandle?: string): JourneyEdge => ({
  id: `${source}-${target}`,
  source,
  target,
  ...(sourceHandle ? { sourceHandle } : {}),
});
const journey = (nodes: JourneyNode[], edges: JourneyEdge[]): JourneyDefinition => ({
  definitionVersion: 1,
  nodes,
  edges,
});

const START = node('n1', 'start', { fields: [{ name: 'plan', type: 'string' }] });
const START_PATHS = ['start', 'start.fields', 'start.fields.plan', 'start.name', 'start.phone'];
const branchOnPlan = (id: string) =>
  node(id, 'branch', {
    rules: [{ handle: 'premium', when: { variable: 'start.fields.plan', operator: 'equals', value: 'premium' } }],
    defaultHandle: 'basic',
  });

/** "path" when set on every path to the node, "path?" when on some only. */
function readable(catalog: VariableCatalog, nodeId: string): string[] {
  return catalog.availabilityByNode[nodeId]!.map((variable) => `${variable.path}${variable.optional ? '?' : ''}`);
}

function statusAt(catalog: VariableCatalog, nodeId: string, template: string) {
  return isReferenceAvailable(
    parseReferences(template)[0]!,
    catalog.availabilityByNode[nodeId]!,
    variableDescriptors(catalog),
  );
}

describe('what each node can read', () => {
  // n1 → n2 branch ─premium→ n3 call ─→ n5 whatsapp → n6 end
  //                 └basic──────────────┘
  const oneSided = journey(
    [
      START,
      branchOnPlan('n2'),
      node('n3', 'call'),
      node('n5', 'whatsapp', { templateName: 'thanks' }),
      node('n6', 'end'),
    ],
    [edge('n1', 'n2'), edge('n2', 'n3', 'premium'), edge('n2', 'n5', 'basic'), edge('n3', 'n5'), edge('n5', 'n6')],
  );

  it('the start node reads nothing; what it produces reaches every node after it', () => {
    const catalog = buildCatalog(oneSided);
    expect(readable(catalog, 'n1')).toEqual([]);
    expect(readable(catalog, 'n2')).toEqual(START_PATHS);
    expect(catalog.availabilityByNode.n2!.map((variable) => variable.type)).toEqual([
      'object',
      'object',
      'string',
      'string',
      'string',
    ]);
  });

  it('a variable produced on one branch only is optional after the join', () => {
    const catalog = buildCatalog(oneSided);
    expect(readable(catalog, 'n3')).toEqual(['n2', 'n2.matched', ...START_PATHS]);
    expect(readable(catalog, 'n5')).toEqual([
      'n2',
      'n2.matched',
      'n3?',
      'n3.attempts?',
      'n3.callId?',
      'n3.durationMs?',
      'n3.outcome?',
      ...START_PATHS,
    ]);
    expect(readable(catalog, 'n6')).toContain('n5.status');
    expect(statusAt(catalog, 'n5', '{{n3.outcome}}')).toBe('partial');
    expect(statusAt(catalog, 'n5', '{{n3.outcome?}}')).toBe('ok');
    expect(statusAt(catalog, 'n3', '{{n3.outcome}}')).toBe('unknown');
  });

  it('a variable produced on both branches is not optional after the join', () => {
    // n1 → n2 branch ─premium→ n3 wait → n4 webhook → n5 end
    //                 └basic───────────────┘
    const catalog = buildCatalog(
      journey(
        [
          START,
          branchOnPlan('n2'),
          node('n3', 'wait', { seconds: 60 }),
          node('n4', 'webhook', { url: 'https://example.com' }),
          node('n5', 'end'),
        ],
        [edge('n1', 'n2'), edge('n2', 'n3', 'premium'), edge('n2', 'n4', 'basic'), edge('n3', 'n4'), edge('n4', 'n5')],
      ),
    );
    expect(readable(catalog, 'n4')).toEqual(['n2', 'n2.matched', 'n3?', 'n3.wokeAt?', ...START_PATHS]);
    expect(readable(catalog, 'n5')).toEqual([
      'n2',
      'n2.matched',
      'n3?',
      'n3.wokeAt?',
      'n4',
      'n4.body',
      'n4.status',
      ...START_PATHS,
    ]);
  });

  it("a loop through a wait: what the loop sets is optional on its way in, never the node's own output", () => {
    // n1 → n2 call → n3 branch ─answered→ n5 end
    //        ↑          └retry→ n4 wait ─┘(back to n2)
    const catalog = buildCatalog(
      journey(
        [
          START,
          node('n2', 'call'),
          node('n3', 'branch', {
            rules: [{ handle: 'answered', when: { variable: 'n2.outcome', operator: 'equals', value: 'answered' } }],
            defaultHandle: 'retry',
          }),
          node('n4', 'wait', { seconds: 3600 }),
          node('n5', 'end'),
        ],
        [edge('n1', 'n2'), edge('n2', 'n3'), edge('n3', 'n5', 'answered'), edge('n3', 'n4', 'retry'), edge('n4', 'n2')],
      ),
    );
    expect(readable(catalog, 'n2')).toEqual(['n3?', 'n3.matched?', 'n4?', 'n4.wokeAt?', ...START_PATHS]);
    expect(readable(catalog, 'n4')).toEqual([
      'n2',
      'n2.attempts',
      'n2.callId',
      'n2.durationMs',
      'n2.outcome',
      'n3',
      'n3.matched',
      ...START_PATHS,
    ]);
    expect(readable(catalog, 'n5')).toEqual([
      'n2',
      'n2.attempts',
      'n2.callId',
      'n2.durationMs',
      'n2.outcome',
      'n3',
      'n3.matched',
      'n4?',
      'n4.wokeAt?',
      ...START_PATHS,
    ]);
  });

  it('paths below an open object are readable wherever it is, and as optional as it is', () => {
    // n1 → n2 branch ─premium→ n3 webhook → n4 set_variable → n5 end
    //                 └basic─────────────────┘
    const catalog = buildCatalog(
      journey(
        [
          START,
          branchOnPlan('n2'),
          node('n3', 'webhook', { url: 'https://example.com' }),
          node('n4', 'set_variable', { value: 'x' }),
          node('n5', 'end'),
        ],
        [edge('n1', 'n2'), edge('n2', 'n3', 'premium'), edge('n2', 'n4', 'basic'), edge('n3', 'n4'), edge('n4', 'n5')],
      ),
    );
    expect(statusAt(catalog, 'n2', '{{start.fields.undeclared}}')).toBe('ok');
    expect(statusAt(catalog, 'n2', '{{start.fields.plan}}')).toBe('ok');
    expect(statusAt(catalog, 'n2', '{{start.fields.plan.deeper}}')).toBe('unknown');
    expect(statusAt(catalog, 'n2', '{{start.name.first}}')).toBe('unknown');
    expect(statusAt(catalog, 'n2', '{{start.surname}}')).toBe('unknown');
    expect(statusAt(catalog, 'n4', '{{n3.body.customer.tier}}')).toBe('partial');
    expect(statusAt(catalog, 'n4', '{{n3.body.customer.tier?}}')).toBe('ok');
    expect(statusAt(catalog, 'n4', '{{n3.headers}}')).toBe('unknown');
    expect(statusAt(catalog, 'n5', '{{n4.value}}')).toBe('ok');
    expect(statusAt(catalog, 'n5', '{{n4.value.x}}')).toBe('unknown');
  });
});

describe('the catalog', () => {
  const catalog = buildCatalog(
    journey(
      [
        START,
        node('n2', 'review', { instructions: 'Check the lead.' }),
        node('n3', 'set_variable', { value: '{{n2.note}}', valueType: 'string' }),
        node('n4', 'end'),
        node('n5', 'call'),
      ],
      [edge('n1', 'n2'), edge('n2', 'n3'), edge('n3', 'n4'), edge('n5', 'n4')],
    ),
  );

  it('lists the producers in node order, with their labels and outputs', () => {
    expect(catalog.producers.map((producer) => [producer.nodeId, producer.label, producer.output.name])).toEqual([
      ['n1', 'Lead enters the journey', 'start'],
      ['n2', 'Human review', 'n2'],
      ['n3', 'Set a variable', 'n3'],
      ['n5', 'Place a call', 'n5'],
    ]);
  });

  it('describes the lead fields as the trigger input', () => {
    expect(catalog.triggerInput.name).toBe('fields');
    expect(catalog.triggerInput.open).toBe(true);
    expect(catalog.triggerInput.children.map((child) => `${child.name}:${child.type}`)).toEqual(['plan:string']);
  });

  it('offers the condition operators by type', () => {
    expect(catalog.conditionOperatorsByType).toEqual(CONDITION_OPERATORS_BY_TYPE);
  });

  it('gives a node no path from the start reaches nothing to read', () => {
    expect(readable(catalog, 'n5')).toEqual([]);
    expect(readable(catalog, 'n4')).not.toContain('n5.outcome?');
  });

  it('types each variable', () => {
    expect(catalog.availabilityByNode.n4!.filter((variable) => variable.path.startsWith('n2.'))).toEqual([
      { path: 'n2.decidedBy', type: 'string', optional: false },
      { path: 'n2.decision', type: 'enum', optional: false },
      { path: 'n2.note', type: 'string', optional: false },
    ]);
  });
});

describe('a catalog of a broken graph', () => {
  it('without a start node: nothing readable, no lead fields declared', () => {
    const catalog = buildCatalog(journey([node('n2', 'call'), node('n3', 'end')], [edge('n2', 'n3')]));
    expect(catalog.availabilityByNode).toEqual({ n2: [], n3: [] });
    expect(catalog.triggerInput).toMatchObject({ name: 'fields', open: true, children: [] });
  });

  it('tolerates duplicate ids, dangling edges, edges into the start, unknown types and invalid data', () => {
    const catalog = buildCatalog(
      journey(
        [
          START,
          node('n2', 'call'),
          node('n2', 'wait', { seconds: 5 }),
          node('n3', 'fax'),
          node('n4', 'wait', {}),
          node('n5', 'start'),
          node('n6', 'end'),
        ],
        [
          edge('n1', 'n2'),
          edge('n2', 'n3'),
          edge('n3', 'n4'),
          edge('n4', 'n1'),
          edge('n4', 'n9'),
          edge('n4', 'n6'),
          edge('n5', 'n6'),
        ],
      ),
    );
    expect(readable(catalog, 'n1')).toEqual([]);
    expect(readable(catalog, 'n6')).toEqual([
      'n2',
      'n2.attempts',
      'n2.callId',
      'n2.durationMs',
      'n2.outcome',
      ...START_PATHS,
    ]);
    expect(catalog.producers.map((producer) => producer.nodeId)).toEqual(['n1', 'n2']);
  });

  it('reads the lead fields of the first start node', () => {
    const catalog = buildCatalog(
      journey([node('n0', 'start', { fields: [{ name: 'zip', type: 'string' }] }), START], []),
    );
    expect(catalog.triggerInput.children.map((child) => child.name)).toEqual(['zip']);
  });
});
