import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectEslint } from './support/project-eslint';
import { importCycles, valueImportGraph } from './support/value-imports';

const projectRoot = path.resolve(import.meta.dirname, '..');
const SOURCE_FOLDERS = ['api', 'workflows', 'activities', 'lib', 'cli', 'worker', 'scripts', 'test', 'bench', 'prisma'];
const eslint = projectEslint;

/** The rules a source broke, as if it were the file at filePath. */
async function ruleIdsOf(filePath: string, code: string) {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((message) => message.ruleId);
}

const RESTRICTED = '@typescript-eslint/no-restricted-imports';

describe('the layering of the folders (eslint.config.js)', () => {
  it('lib/ imports nothing from workflows/, activities/ or api/, not even types', async () => {
    for (const source of [
      "import type { LeadState } from '../workflows/lead-dial';\nexport type X = LeadState;\n",
      "import type { Activities } from '../../activities';\nexport type X = Activities;\n",
      "import { upsertLeads } from '../api/services/lead-rows';\nexport const x = upsertLeads;\n",
    ])
      expect(await ruleIdsOf('lib/journeys/example.ts', source)).toContain(RESTRICTED);
    expect(
      await ruleIdsOf(
        'lib/example.ts',
        "import { leadWorkflowId } from './workflow-ids';\nexport const x = leadWorkflowId;\n",
      ),
    ).toEqual([]);
  });

  it('api/http imports nothing from api/services but the type of what handlers get', async () => {
    expect(
      await ruleIdsOf(
        'api/http/example.ts',
        "import { logCampaignRequests } from '../services/api-logs';\nexport const x = logCampaignRequests;\n",
      ),
    ).toContain(RESTRICTED);
    expect(
      await ruleIdsOf(
        'api/http/example.ts',
        "import type { AppServices } from '../services';\nexport type X = AppServices;\n",
      ),
    ).toEqual([]);
  });

  it('outside workflows/, workflow code is imported as types only; messages come from lib/temporal/messages', async () => {
    expect(
      await ruleIdsOf(
        'api/campaigns/example.ts',
        "import { journeyRunWorkflow } from '../../workflows/journey-run';\nexport const x = journeyRunWorkflow;\n",
      ),
    ).toContain(RESTRICTED);
    expect(
      await ruleIdsOf(
        'api/campaigns/example.ts',
        "import type { journeyRunWorkflow } from '../../workflows/journey-run';\nexport type X = typeof journeyRunWorkflow;\n",
      ),
    ).toEqual([]);
    expect(
      await ruleIdsOf(
        'activities/example.ts',
        "import { campaignChangedSignal } from '../lib/temporal/messages';\nexport const x = campaignChangedSignal;\n",
      ),
    ).toEqual([]);
  });
});

describe('one home for signals, updates and queries (eslint.config.js)', () => {
  const definition =
    "import { defineSignal } from '@temporalio/workflow';\nexport const nudge = defineSignal('nudge');\n";

  it('defines them in lib/temporal/messages.ts only', async () => {
    expect(await ruleIdsOf('workflows/example.ts', definition)).toContain(RESTRICTED);
    expect(await ruleIdsOf('activities/example.ts', definition)).toContain(RESTRICTED);
    expect(await ruleIdsOf('lib/temporal/messages.ts', definition)).toEqual([]);
  });

  it('sends the definition, never its name as a string', async () => {
    const send = (what: string) =>
      `import type { WorkflowHandle } from '@temporalio/client';\nexport const send = (handle: WorkflowHandle) => ${what};\n`;
    expect(await ruleIdsOf('activities/example.ts', send("handle.signal('campaignChanged')"))).toContain(
      'no-restricted-syntax',
    );
    expect(
      await ruleIdsOf('api/campaigns/example.ts', send("handle.executeUpdate('recover', { args: [] })")),
    ).toContain('no-restricted-syntax');
    expect(
      await ruleIdsOf(
        'activities/example.ts',
        `import { campaignChangedSignal } from '../lib/temporal/messages';\n${send('handle.signal(campaignChangedSignal)')}`,
      ),
    ).toEqual([]);
  });
});

describe('one home for retry policies (eslint.config.js)', () => {
  it('refuses a retry-policy object literal in workflows/, however it is written', async () => {
    const proxy = (retry: string) =>
      `import { proxyActivities } from '@temporalio/workflow';\nexport const a = proxyActivities({ startToCloseTimeout: '1 minute', retry: ${retry} });\n`;
    const named = "import { untilDatabaseAnswers } from '../lib/temporal/retry-policies';\n";
    for (const source of [
      proxy("{ initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' }"),
      "const retry = { initialInterval: '1 second', maximumAttempts: 20 };\nexport const options = { retry };\n",
      `${named}export const options = { retry: { ...untilDatabaseAnswers, maximumAttempts: 3 } };\n`,
    ])
      expect(await ruleIdsOf('workflows/example.ts', source)).toEqual(['no-restricted-syntax']);
    expect(await ruleIdsOf('workflows/example.ts', `${named}${proxy('untilDatabaseAnswers')}`)).toEqual([]);
    // Their home names them as literals.
    expect(
      await ruleIdsOf('lib/temporal/retry-policies.ts', "export const p = { initialInterval: '1 second' };\n"),
    ).toEqual([]);
  });
});

describe('one home for patch ids (eslint.config.js)', () => {
  it('refuses patched() or deprecatePatch() in workflows/ with an id that is not PATCHES.<name>.id', async () => {
    const ask = (call: string) =>
      `import { deprecatePatch, patched } from '@temporalio/workflow';\nimport { PATCHES } from '../lib/temporal/patches';\nexport const ask = () => ${call};\nexport const used = [patched, deprecatePatch, PATCHES];\n`;
    for (const call of [
      "patched('local-bookkeeping')",
      'patched(`local-bookkeeping`)',
      "deprecatePatch('test-call-billing')",
      'patched(PATCHES.localBookkeeping)',
    ])
      expect(await ruleIdsOf('workflows/example.ts', ask(call))).toEqual(['no-restricted-syntax']);
    expect(await ruleIdsOf('workflows/example.ts', ask('patched(PATCHES.localBookkeeping.id)'))).toEqual([]);
  });
});

describe('value-import cycles', () => {
  it('there are none in the project (a cycle of type-only imports is fine: types are erased)', () => {
    expect(importCycles(valueImportGraph(projectRoot, SOURCE_FOLDERS))).toEqual([]);
  });

  it('are found through static and dynamic imports, and type-only imports are not counted', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'import-cycles-'));
    try {
      const files: Record<string, string> = {
        'a.ts': "import { b } from './b';\nexport const a = () => b;\n",
        'b.ts': "import { a } from './a';\nexport const b = () => a;\n",
        'c.ts': "export const c = async () => (await import('./d')).d;\n",
        'd.ts': "import { c } from './c';\nexport const d = c;\n",
        'e.ts': "import type { F } from './f';\nexport type E = F;\nexport const e = 1;\n",
        'f.ts': "import { e, type E } from './e';\nexport type F = E;\nexport const f = e;\n",
        'g.ts': "import { type H } from './h';\nexport type G = H;\n",
        'h.ts': "export { type G as H } from './g';\n",
      };
      for (const [name, code] of Object.entries(files)) writeFileSync(path.join(dir, name), code);
      expect(importCycles(valueImportGraph(dir, ['.']))).toEqual([
        ['a.ts', 'b.ts'],
        ['c.ts', 'd.ts'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
