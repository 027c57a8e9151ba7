import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The project's value imports: for each source file, the project files it imports or re-exports
 * something from that exists at run time, statically or with `import()`. `import type`, `export type`
 * and imports whose every name is marked `type` are left out (they are erased), as are packages.
 */
export function valueImportGraph(root: string, folders: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of folders.flatMap((folder) => sourceFiles(path.join(root, folder)))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    const specifiers = [
      ...source.statements.filter(isValueImport).map((statement) => (statement as ts.ImportDeclaration | ts.ExportDeclaration).moduleSpecifier),
      ...dynamicImports(source),
    ];
    const targets = specifiers
      .filter((specifier): specifier is ts.StringLiteral => !!specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.'))
      .map((specifier) => resolve(path.dirname(file), specifier.text))
      .filter((target): target is string => target !== null);
    graph.set(path.relative(root, file), [...new Set(targets.map((target) => path.relative(root, target)))]);
  }
  return graph;
}

/** Every cycle's files (strongly connected components of more than one file, or a file importing itself). */
export function importCycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm, iterative over the files so that a deep chain cannot overflow the stack.
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (file: string) => {
    index.set(file, counter);
    lowLink.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        lowLink.set(file, Math.min(lowLink.get(file)!, lowLink.get(next)!));
      } else if (onStack.has(next)) {
        lowLink.set(file, Math.min(lowLink.get(file)!, index.get(next)!));
      }
    }
    if (lowLink.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)?.includes(file)) cycles.push(component.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return cycles;
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
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0]) found.push(node.arguments[0]);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function resolve(fromDir: string, specifier: string): string | null {
  const base = path.resolve(fromDir, specifier);
  const candidates = [base, `${base}.ts`, path.join(base, 'index.ts')];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile() && candidate.endsWith('.ts')) ?? null;
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return ['node_modules', 'histories', 'lint-fixtures'].includes(entry.name) ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}
