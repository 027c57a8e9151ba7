import { describe, expect, it } from 'vitest';
import { projectEslint } from './support/project-eslint';

const eslint = projectEslint;

async function lintWorkflowSource(code: string) {
  const [result] = await eslint.lintText(code, { filePath: 'workflows/example.ts' });
  return result!.messages.map((message) => message.ruleId);
}

describe('the lint fence around workflows/', () => {
  it('refuses Node built-ins in workflow code', async () => {
    expect(
      await lintWorkflowSource("import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n"),
    ).toContain('@typescript-eslint/no-restricted-imports');
    expect(await lintWorkflowSource("import crypto from 'crypto';\nexport const x = crypto;\n")).toContain(
      '@typescript-eslint/no-restricted-imports',
    );
  });

  it('refuses activities imported as values, and accepts them as types', async () => {
    expect(
      await lintWorkflowSource(
        "import { createActivities } from '../activities';\nexport const x = createActivities;\n",
      ),
    ).toContain('@typescript-eslint/no-restricted-imports');
    expect(
      await lintWorkflowSource("import type { Activities } from '../activities';\nexport type X = Activities;\n"),
    ).toEqual([]);
  });

  it('refuses process and fetch in workflow code, and leaves other folders alone', async () => {
    expect(await lintWorkflowSource('export const url = process.env.URL;\n')).toContain('no-restricted-globals');
    const [elsewhere] = await eslint.lintText(
      "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n",
      { filePath: 'activities/example.ts' },
    );
    expect(elsewhere!.messages).toEqual([]);
  });
});
