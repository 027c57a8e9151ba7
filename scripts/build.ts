// `npm run build [-- --out-dir DIR]`: the API, the workers, the CLI and the generated Prisma client compiled by
// the TypeScript compiler into dist/ as ES modules that plain `node` runs, then the workflow bundle the worker
// loads (dist/workflow-bundle.js, WORKFLOW_BUNDLE_PATH, and the traced one beside it), made by the compiled bundler.
// docs/operations.md#production-the-build-the-image-docker-compose
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { projectRoot } from './stack/paths';

const BUILD_CONFIG = path.join(projectRoot, 'tsconfig.build.json');
export const WORKFLOW_BUNDLE_FILE = 'workflow-bundle.js';

/**
 * Node's ESM loader takes a relative specifier as the file name it is: `./config` and `./journey` (a folder)
 * do not load. The sources are written for a bundler's resolution, so each relative specifier of the output is
 * replaced by the file the compiler resolved it to, with the extension that file is emitted with. A specifier
 * the compiler cannot resolve fails the build rather than the process at run time.
 */
function relativeSpecifiersAsEmittedFiles(options: ts.CompilerOptions): ts.TransformerFactory<ts.SourceFile> {
  return (context) => (sourceFile) => {
    const { factory } = context;
    const emittedSpecifier = (literal: ts.StringLiteral): ts.StringLiteral => {
      const specifier = literal.text;
      if (!specifier.startsWith('./') && !specifier.startsWith('../')) return literal;
      const resolved = ts.resolveModuleName(specifier, sourceFile.fileName, options, ts.sys).resolvedModule;
      if (
        !resolved ||
        resolved.isExternalLibraryImport ||
        !/\.[cm]?tsx?$/.test(resolved.resolvedFileName) ||
        resolved.resolvedFileName.endsWith('.d.ts')
      ) {
        throw new Error(
          `${path.relative(projectRoot, sourceFile.fileName)}: cannot compile the import of "${specifier}"`,
        );
      }
      const emitted = resolved.resolvedFileName
        .replace(/\.ts$/, '.js')
        .replace(/\.mts$/, '.mjs')
        .replace(/\.cts$/, '.cjs');
      const relative = path.relative(path.dirname(sourceFile.fileName), emitted).split(path.sep).join('/');
      return factory.createStringLiteral(relative.startsWith('.') ? relative : `./${relative}`);
    };
    const visit = (node: ts.Node): ts.Node => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        return factory.updateImportDeclaration(
          node,
          node.modifiers,
          node.importClause,
          emittedSpecifier(node.moduleSpecifier),
          node.attributes,
        );
      }
      if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        return factory.updateExportDeclaration(
          node,
          node.modifiers,
          node.isTypeOnly,
          node.exportClause,
          emittedSpecifier(node.moduleSpecifier),
          node.attributes,
        );
      }
      if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        return factory.updateCallExpression(node, node.expression, node.typeArguments, [
          emittedSpecifier(node.arguments[0]),
          ...node.arguments.slice(1),
        ]);
      }
      return ts.visitEachChild(node, visit, context);
    };
    return ts.visitEachChild(sourceFile, visit, context);
  };
}

function formatDiagnostics(diagnostics: readonly ts.Diagnostic[]): string {
  return ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (fileName) => fileName,
    getCurrentDirectory: () => projectRoot,
    getNewLine: () => '\n',
  });
}

/**
 * Type-checks and compiles into outDir (emptied first); throws with the compiler's messages on any error.
 * `typeCheck: false` only emits, for a caller that has type-checked already (the test of the build).
 */
export function compile(outDir: string, { typeCheck = true }: { typeCheck?: boolean } = {}): void {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    BUILD_CONFIG,
    { outDir },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(formatDiagnostics([diagnostic]));
      },
    },
  );
  if (!parsed) throw new Error(`cannot read ${BUILD_CONFIG}`);
  if (parsed.errors.length > 0) throw new Error(formatDiagnostics(parsed.errors));
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
  const errors = (diagnostics: readonly ts.Diagnostic[]) =>
    diagnostics.filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error);
  const typeErrors = typeCheck
    ? errors(ts.getPreEmitDiagnostics(program))
    : errors([...program.getOptionsDiagnostics(), ...program.getSyntacticDiagnostics()]);
  if (typeErrors.length > 0) throw new Error(formatDiagnostics(typeErrors));
  rmSync(outDir, { recursive: true, force: true });
  const emitErrors = errors(
    program.emit(undefined, undefined, undefined, false, { after: [relativeSpecifiersAsEmittedFiles(parsed.options)] })
      .diagnostics,
  );
  if (emitErrors.length > 0) throw new Error(formatDiagnostics(emitErrors));
}

/** The workflow bundle, made by the compiled bundler with plain node from the compiled workflows. */
export function bundleWorkflows(outDir: string): string {
  const bundlePath = path.join(outDir, WORKFLOW_BUNDLE_FILE);
  execFileSync(process.execPath, [path.join(outDir, 'worker/bundle-workflows.js'), bundlePath], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return bundlePath;
}

/**
 * The image's layout in appDir: package.json (its "type": "module" makes dist/ ES modules), node_modules (a
 * link to the checkout's) and the build in dist/, and no TypeScript beside it. For the test and the bench of
 * the compiled processes. Returns the dist folder.
 */
export function buildAppLikeTheImage(appDir: string, options: { typeCheck?: boolean } = {}): string {
  mkdirSync(appDir, { recursive: true });
  copyFileSync(path.join(projectRoot, 'package.json'), path.join(appDir, 'package.json'));
  symlinkSync(path.join(projectRoot, 'node_modules'), path.join(appDir, 'node_modules'));
  const distDir = path.join(appDir, 'dist');
  compile(distDir, options);
  bundleWorkflows(distDir);
  return distDir;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const outFlag = process.argv.indexOf('--out-dir');
  const outDir = path.resolve(outFlag === -1 ? path.join(projectRoot, 'dist') : process.argv[outFlag + 1]!);
  const started = Date.now();
  try {
    compile(outDir);
    bundleWorkflows(outDir);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
  console.log(
    `compiled into ${path.relative(process.cwd(), outDir) || '.'} with the workflow bundle in ${(Date.now() - started) / 1000} s`,
  );
}
