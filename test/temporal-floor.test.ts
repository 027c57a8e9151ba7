import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { WORKFLOW_TYPES, type WorkflowContracts, type WorkflowType } from '../lib/temporal/workflow-contracts';
import * as workflows from '../workflows';
import { projectEslint } from './support/project-eslint';

const projectRoot = path.resolve(import.meta.dirname, '..');

/** The lint messages of a source, as if it were the file at filePath. */
async function lintAt(filePath: string, code: string) {
  const [result] = await projectEslint.lintText(code, { filePath });
  return result!.messages.map(({ ruleId, message }) => ({ ruleId, message }));
}

const RESTRICTED = '@typescript-eslint/no-restricted-imports';
const client = "import type { Client } from '@temporalio/client';\n";

describe('Temporal as a client lives in lib/temporal/ (eslint.config.js)', () => {
  const calls = {
    start: `${client}export const go = (temporal: Client) => temporal.workflow.start('exportJobWorkflow', { workflowId: 'x', taskQueue: 'q', args: [] });\n`,
    handle: `${client}export const go = (temporal: Client) => temporal.workflow.getHandle('x').cancel();\n`,
    signalWithStart: `${client}export const go = (services: { temporal: Client }) =>\n  services.temporal.workflow.signalWithStart('liveSheetWorkflow', { workflowId: 'x', taskQueue: 'q', args: [], signal: 'sheetSync' });\n`,
    list: `${client}export const go = (temporal: Client) => temporal.workflow.list({ query: '' });\n`,
    withStart: `import { WithStartWorkflowOperation } from '@temporalio/client';\nexport const op = new WithStartWorkflowOperation('campaignWorkflow', { workflowId: 'x', taskQueue: 'q', args: [], workflowIdConflictPolicy: 'USE_EXISTING' });\n`,
  };

  it('refuses client calls in api/, activities/, cli/, worker/ and the rest of lib/, naming lib/temporal/', async () => {
    const places = [
      'api/exports/example.ts',
      'activities/campaigns/example.ts',
      'cli/example.ts',
      'worker/example.ts',
      'lib/calls/example.ts',
    ];
    for (const filePath of places)
      for (const [what, code] of Object.entries(calls)) {
        const floorMessages = (await lintAt(filePath, code)).filter(
          ({ ruleId, message }) => ruleId === 'no-restricted-syntax' && message.includes('lib/temporal/'),
        );
        expect(floorMessages.length, `${what} in ${filePath}`).toBeGreaterThan(0);
      }
  });

  it('takes them in lib/temporal/, and leaves tests and scripts alone', async () => {
    for (const filePath of ['lib/temporal/example.ts', 'test/example.test.ts', 'scripts/example.ts'])
      for (const code of Object.values(calls).slice(0, 4))
        expect(await lintAt(filePath, code), filePath).toEqual(
          // A signal's name as a string stays refused everywhere (messagesSentByDefinition).
          code.includes("signal: 'sheetSync'") ? [expect.objectContaining({ ruleId: 'no-restricted-syntax' })] : [],
        );
  });

  it('lets callers elsewhere use what the floor exports', async () => {
    const code =
      "import type { Client } from '@temporalio/client';\nimport { startExportJob } from '../../lib/temporal/exports';\n" +
      "export const go = (temporal: Client) => startExportJob(temporal, 'q', { exportId: 'x', pageRows: 1, retentionSeconds: 1 }, { campaignId: 'c', workspaceId: 'w' });\n";
    expect(await lintAt('api/exports/example.ts', code)).toEqual([]);
  });

  it('lets lib/temporal/ import nothing from workflows/, not even types: the contracts are in lib/', async () => {
    const workflowType =
      "import type { leadDialWorkflow } from '../../workflows/dial-ladder/legacy/lead-dial';\nexport type X = typeof leadDialWorkflow;\n";
    const stateType =
      "import type { LeadState } from '../../workflows/dial-ladder/legacy/lead-dial';\nexport type X = LeadState;\n";
    const activityType = "import type { Activities } from '../../activities';\nexport type X = Activities;\n";
    expect((await lintAt('lib/temporal/example.ts', workflowType)).map(({ ruleId }) => ruleId)).toContain(RESTRICTED);
    for (const code of [stateType, activityType])
      expect((await lintAt('lib/temporal/messages.ts', code)).map(({ ruleId }) => ruleId)).toContain(RESTRICTED);
    expect(
      await lintAt(
        'lib/temporal/example.ts',
        "import type { WorkflowContracts } from './workflow-contracts';\nexport type X = WorkflowContracts['leadDialWorkflow'];\n",
      ),
    ).toEqual([]);
  });
});

describe('lib/temporal/workflow-contracts.ts', () => {
  it('is what workflows/index.ts exports, both ways', () => {
    // Compile time (tsc): every contract is an exported workflow of that signature, and every exported
    // workflow has a contract of its own signature.
    const contracted: WorkflowContracts = workflows;
    const exported: { [T in WorkflowType]: (typeof workflows)[T] } = contracted;
    const everyWorkflowContracted: [Exclude<keyof typeof workflows, WorkflowType>] extends [never] ? true : false =
      true;
    // Run time: the same names, each a workflow function.
    expect(Object.keys(workflows).sort()).toEqual([...WORKFLOW_TYPES].sort());
    expect(everyWorkflowContracted).toBe(true);
    for (const type of WORKFLOW_TYPES) expect(typeof exported[type], type).toBe('function');
  });
});

/** Every relative module a source names, type-only imports, `import('…')` types and re-exports included. */
function importedModules(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const specifiers: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
      specifiers.push((node.moduleSpecifier as ts.StringLiteral).text);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
      specifiers.push((node.argument.literal as ts.StringLiteral).text);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      specifiers.push((node.arguments[0] as ts.StringLiteral).text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => path.resolve(path.dirname(file), specifier));
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

describe('workflow code, imported by the worker and tests alone', () => {
  it('is imported by nothing in api/, activities/, lib/, cli/, scripts/ or simulators/, not even as types', () => {
    const workflowsDir = path.join(projectRoot, 'workflows');
    const arrows = ['api', 'activities', 'lib', 'cli', 'scripts', 'simulators']
      .flatMap((folder) => sourceFiles(path.join(projectRoot, folder)))
      .flatMap((file) =>
        importedModules(file)
          .filter((module) => module === workflowsDir || module.startsWith(workflowsDir + path.sep))
          .map((module) => `${path.relative(projectRoot, file)} -> ${path.relative(projectRoot, module)}`),
      );
    expect(arrows).toEqual([]);
  });
});
