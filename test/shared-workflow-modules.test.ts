import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { parseWorkflowCode } from '@temporalio/worker/lib/worker.js';
import { ReusableVMWorkflowCreator } from '@temporalio/worker/lib/workflow/reusable-vm.js';
import { describe, expect, inject, it } from 'vitest';
import { SHARED_WORKFLOW_MODULES } from '../worker/shared-workflow-modules';

const root = path.resolve(import.meta.dirname, '..');
const workflowsDir = path.join(root, 'workflows');
const sourceOf = (module: string) => readFileSync(`${module}.ts`, 'utf8');

/** Relative modules a source imports with at least one value (not `import type`, not only `type X` names). */
function valueImports(source: string, fromDir: string): string[] {
  const imports = source.matchAll(/^import\s+(type\s+)?(?:\{([^}]*)\}|[\w*][^'"]*?)\s+from\s+'(\.[^']+)'/gm);
  return [...imports]
    .filter(([, typeOnly, names]) => {
      if (typeOnly) return false;
      if (names === undefined) return true;
      return names
        .split(',')
        .map((name) => name.trim())
        .some((name) => name && !name.startsWith('type '));
    })
    .map(([, , , specifier]) => path.resolve(fromDir, specifier!));
}

/** The module and every relative module it imports, transitively. */
function withImports(module: string, seen = new Set<string>()): Set<string> {
  if (seen.has(module)) return seen;
  seen.add(module);
  for (const imported of valueImports(sourceOf(module), path.dirname(module))) withImports(imported, seen);
  return seen;
}

/** The SDK's shared V8 context, open to the test. */
class SharedContext extends ReusableVMWorkflowCreator {
  get sandbox(): vm.Context {
    return this.context;
  }
}

/**
 * Zod schemas reachable the way the SDK's deepFreeze walks a shared module's exports: own properties of
 * objects, recursively; functions are frozen without being walked.
 */
function zodSchemasReachable(values: unknown[], seen = new Set<object>()): object[] {
  const found: object[] = [];
  for (const value of values) {
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    seen.add(value);
    if (Object.hasOwn(value, '_zod')) found.push(value);
    else
      found.push(
        ...zodSchemasReachable(
          Reflect.ownKeys(value).map((key) => (value as Record<PropertyKey, unknown>)[key]),
          seen,
        ),
      );
  }
  return found;
}

describe('modules shared by every cached workflow run', () => {
  it('lists every lib/ module that workflows/ imports as a value', () => {
    const imported = new Set(
      readdirSync(workflowsDir, { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => path.join(workflowsDir, file))
        .flatMap((file) => valueImports(readFileSync(file, 'utf8'), path.dirname(file)))
        .filter((module) => module.startsWith(path.join(root, 'lib') + path.sep))
        // The signals, updates and queries are made with the workflow API (defineSignal...): each run keeps its own.
        .filter((module) => module !== path.join(root, 'lib/temporal/messages')),
    );
    expect(imported.size).toBeGreaterThan(5);
    expect([...imported].sort()).toEqual([...SHARED_WORKFLOW_MODULES].sort());
  });

  it('shares only modules that exist, hold no mutable state and use no workflow API', () => {
    const shared = new Set(SHARED_WORKFLOW_MODULES.flatMap((module) => [...withImports(module)]));
    expect(shared.size).toBeGreaterThanOrEqual(SHARED_WORKFLOW_MODULES.length);
    for (const module of shared) {
      expect(existsSync(`${module}.ts`), module).toBe(true);
      const source = sourceOf(module);
      // Evaluated before any workflow exists and deep-frozen by the SDK: module-level state would be
      // shared by every run, and a workflow API has no workflow to act for.
      expect(source, module).not.toMatch(/^(export\s+)?(let|var)\s/m);
      expect(source, module).not.toMatch(/from '@temporalio\/workflow'/);
    }
  });

  it('exports no zod schema from a shared module, where the SDK would freeze it', async () => {
    const shared = [...new Set(SHARED_WORKFLOW_MODULES.flatMap((module) => [...withImports(module)]))];
    const schemasIn = (modules: Record<string, unknown>) => zodSchemasReachable(Object.values(modules));
    for (const module of shared) expect(schemasIn(await import(`${module}.ts`)), module).toEqual([]);
    // The check itself: definition.ts exports its schemas, so it could not be shared.
    expect(schemasIn(await import('../lib/journeys/definition')).length).toBeGreaterThan(5);
  });

  it('parses node data in the shared context once the SDK has frozen it', async () => {
    // The worker's own sandbox set-up on the bundle the tests' worker runs: it evaluates the shared
    // modules, then deep-freezes them, as for every run.
    const bundlePath = inject('stack').workflowBundlePath;
    const creator = await SharedContext.create(
      parseWorkflowCode(readFileSync(bundlePath, 'utf8'), bundlePath),
      5_000,
      new Set(),
      undefined,
    );
    const inSandbox = (expression: string) =>
      JSON.parse(
        vm.runInContext(
          `JSON.stringify((() => { const nodeData = __webpack_module_cache__['./lib/journeys/node-data.ts'].exports; return ${expression}; })())`,
          creator.sandbox,
        ) as string,
      ) as unknown;
    try {
      expect(inSandbox('Object.isFrozen(nodeData)')).toBe(true);
      // A workflow module is not shared: each run evaluates its own.
      expect(inSandbox("__webpack_module_cache__['./workflows/journeys/journey-run.ts'] === undefined")).toBe(true);
      const branch = {
        rules: [{ handle: 'a', when: { variable: 'start.name', operator: 'is_empty' } }],
        defaultHandle: 'b',
      };
      expect(inSandbox(`nodeData.safeParseNodeData({ type: 'branch', data: ${JSON.stringify(branch)} })`)).toEqual({
        ok: true,
        type: 'branch',
        data: branch,
      });
      expect(
        inSandbox(`nodeData.safeParseNodeData({ type: 'webhook', data: { url: 'https://example.test' } })`),
      ).toEqual({ ok: true, type: 'webhook', data: { url: 'https://example.test', method: 'POST' } });
      expect(
        inSandbox(`nodeData.safeParseNodeData({ type: 'wait', data: {} }).issues.map((issue) => issue.message)`),
      ).toEqual(['set exactly one of seconds or until']);
    } finally {
      await creator.destroy();
    }
  });

  it('would catch a workflow import missing from the list', () => {
    const source = "import { chooseBranch } from '../lib/journeys/conditions';\nimport type { X } from '../lib/y';\n";
    expect(valueImports(source, workflowsDir)).toEqual([path.join(root, 'lib/journeys/conditions')]);
    expect(valueImports("import { type A, type B } from '../lib/z';\n", workflowsDir)).toEqual([]);
    expect(() => withImports(path.join(root, 'lib/journeys/definition'))).not.toThrow();
    expect(withImports(path.join(root, 'lib/journeys/definition'))).toContain(
      path.join(root, 'lib/calls/call-outcomes'),
    );
  });
});
