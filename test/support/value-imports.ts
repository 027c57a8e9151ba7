import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { stronglyConnectedComponents } from '../../lib/strongly-connected-components';

/**
 * The project's value imports: for each source file, the project files it imports or re-exports
 * something from that exists at run time, statically or with `import()`. `import type`, `export type`
 * and imports whose every name is marked `type` are left out (they are erased), as are packages.
 */
export function valueImportGraph(root: string, folders: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of folders.flatMap((folder) => sourceFiles(path.join(root, folder)))) {
    const source = ts.createSourceFile(
      file,
      readFileSync(file, 'utf8'),
      ts.ScriptTarget.Latest,
      false,
      ts.ScriptKind.TS,
    );
    const specifiers = [
      ...source.statements
        .filter(isValueImport)
        .map((statement) => (statement as ts.ImportDeclaration | ts.ExportDeclaration).moduleSpecifier),
      ...dynamicImports(source),
    ];
    const targets = specifiers
      .filter(
        (specifier): specifier is ts.StringLiteral =>
          !!specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.'),
      )
      .map((specifier) => resolve(path.dirname(file), specifier.text))
      .filter((target): target is string => target !== null);
    graph.set(path.relative(root, file), [...new Set(targets.map((target) => path.relative(root, target)))]);
  }
  return graph;
}

/** Every cycle's files (strongly connected components of more than one file, or a file importing itself). */
export function importCycles(graph: Map<string, string[]>): string[][] {
  // Files outside the folders read (generated/, say) are imported but import nothing the graph knows.
  const successors = new Map(
    [...graph.keys(), ...[...graph.values()].flat()].sort().map((file) => [file, graph.get(file) ?? []]),
  );
  return stronglyConnectedComponents(successors)
    .filter((component) => component.length > 1 || successors.get(component[0]!)!.includes(component[0]!))
    .map((component) => component.sort());
}

function isValueImport(statement: ts.Statement): boolean {
  if (ts.isImportDeclaration(statement)) {
    const clause = statement.importClause;
    if (!clause) return true; // import './side-effect'
    if (clause.isTypeOnly) return false;
    if (clause.name) return true;
    const bindings = clause.namedBindings;
    if (!bindings || ts.isNamespaceImport(bindings)) return true;
    return bindings.elements.length === 0 || bindings.elements.some((element) => !element.isTypeOnly);
  }
  if (ts.isExportDeclaration(statement)) {
    if (statement.isTypeOnly || !statement.moduleSpecifier) return false;
    const clause = statement.exportClause;
    return !clause || !ts.isNamedExports(clause) || clause.elements.some((element) => !element.isTypeOnly);
  }
  return false;
}

/** The specifiers of `import('…')` anywhere in the file. */
function dynamicImports(source: ts.SourceFile): ts.Expression[] {
  const found: ts.Expression[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0])
      found.push(node.arguments[0]);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function resolve(fromDir: string, specifier: string): string | null {
  const base = path.resolve(fromDir, specifier);
  const candidates = [base, `${base}.ts`, path.join(base, 'index.ts')];
  return (
    candidates.find(
      (candidate) => existsSync(candidate) && statSync(candidate).isFile() && candidate.endsWith('.ts'),
    ) ?? null
  );
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory())
      return ['node_modules', 'histories', 'lint-fixtures'].includes(entry.name) ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}
