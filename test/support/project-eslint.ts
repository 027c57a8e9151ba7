import path from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

/**
 * The project's ESLint configuration for sources given as text (lintText with a made-up filePath): the
 * import and determinism rules these tests prove are syntactic, and a file that is not on disk has no
 * place in the type-checked program, so type information is switched off for them.
 */
export const projectEslint = new ESLint({
  cwd: path.resolve(import.meta.dirname, '../..'),
  overrideConfig: tseslint.configs.disableTypeChecked,
});
