import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The project's own configuration, with type information: the rules below need the type checker.
const eslint = new ESLint({ cwd: path.resolve(import.meta.dirname, '..') });

/** The rules broken by `code`, linted as the content of an existing file of the program. */
async function typedRuleIdsOf(code: string) {
  const [result] = await eslint.lintText(code, { filePath: 'lib/phone.ts' });
  return result!.messages.map((message) => message.ruleId);
}

// The first lint builds the project's whole type program: minutes on a loaded runner, not seconds.
describe('type-aware lint', { timeout: 240_000 }, () => {
  it('refuses a promise that nobody awaits or handles', async () => {
    const rules = await typedRuleIdsOf(
      'export async function send(): Promise<void> {}\nexport function caller() {\n  send();\n}\n',
    );
    expect(rules).toContain('@typescript-eslint/no-floating-promises');
  });

  it('refuses a promise handed where a callback returning nothing is expected', async () => {
    const rules = await typedRuleIdsOf(
      'export async function shutdown(): Promise<void> {}\nprocess.once("SIGTERM", shutdown);\n',
    );
    expect(rules).toContain('@typescript-eslint/no-misused-promises');
  });

  it('refuses a switch over a union that misses a member', async () => {
    const code =
      "export function label(status: 'queued' | 'duplicate' | 'rejected'): string {\n  switch (status) {\n    case 'queued':\n      return 'q';\n    case 'duplicate':\n      return 'd';\n  }\n  return '';\n}\n";
    expect(await typedRuleIdsOf(code)).toContain('@typescript-eslint/switch-exhaustiveness-check');
  });

  it('accepts the same code written correctly', async () => {
    const code =
      "export async function send(): Promise<void> {}\nexport async function caller() {\n  await send();\n}\nprocess.once('SIGTERM', () => void send());\n";
    expect(await typedRuleIdsOf(code)).toEqual([]);
  });
});
