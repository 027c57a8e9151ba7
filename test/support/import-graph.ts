import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { stronglyConnectedComponents } from '../../lib/strongly-connected-components';

/**
 * Every import between the project's files, type-only ones included (`import type`, `export type`,
 * `import('…')` in a type position): a loop of types is still a loop a reader has to follow.
 */
export function importGraph(root: string, folders: readonly string[]): Map<string, string[]> {
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
        .filter((statement) => ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement))
        .map((statement) => (statement as ts.ImportDeclaration | ts.ExportDeclaration).moduleSpecifier),
      ...dynamicImports(source),
      ...typeImports(source),
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

/**
 * The loops between the folders directly under `top` (lib/, api/): a file `top/x/…` stands for its folder `top/x`, a
 * file right under `top` for itself. Each loop's folders, sorted; none means the folders can be read floor by floor.
 */
export function folderCycles(graph: Map<string, string[]>, top: string): string[][] {
  const unitOf = (file: string) => {
    const parts = file.split(/[\\/]/);
    return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts.join('/');
  };
  const inside = (file: string) => file.split(/[\\/]/)[0] === top;
  const edges = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    if (!inside(file)) continue;
    const from = unitOf(file);
    if (!edges.has(from)) edges.set(from, new Set());
    for (const target of targets.filter(inside)) {
      const to = unitOf(target);
      if (!edges.has(to)) edges.set(to, new Set());
      if (to !== from) edges.get(from)!.add(to);
    }
  }
  const successors = new Map([...edges].sort().map(([unit, next]) => [unit, [...next].sort()]));
  return stronglyConnectedComponents(successors)
    .filter((component) => component.length > 1)
    .map((component) => component.sort());
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

/** The specifiers of `import('…')` types anywhere in the file. */
function typeImports(source: ts.SourceFile): ts.Expression[] {
  const found: ts.Expression[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) found.push(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The imports that run back up: from a file of one top-level folder to a folder its layer may not reach
 * (`allowed` maps a folder to the folders its files may import; a folder not in it may import anything).
 */
export function upwardArrows(
  graph: Map<string, string[]>,
  allowed: Readonly<Record<string, readonly string[]>>,
): string[] {
  const topOf = (file: string) => file.split(/[\\/]/)[0]!;
  return [...graph].flatMap(([file, targets]) => {
    const reachable = allowed[topOf(file)];
    return reachable
      ? targets.filter((target) => !reachable.includes(topOf(target))).map((target) => `${file} -> ${target}`)
      : [];
  });
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

export interface StrangerRules {
  /** The folder whose files are held (simulators). */
  folder: string;
  /** What any of its files may reach outside it: shared infrastructure, no rule of the product's. */
  allowed: readonly string[];
}

/**
 * The files outside `folder` that a file of it reaches and may not, followed through the folder's own files (a twin
 * importing another simulator's file reaches what that file imports): `file -> target`, with `(through …)` when
 * the target is imported by another file of the folder (the one named).
 */
export function strangerImports(graph: Map<string, string[]>, rules: StrangerRules): string[] {
  const inFolder = (file: string) => file.startsWith(`${rules.folder}/`);
  const found: string[] = [];
  for (const file of [...graph.keys()].filter(inFolder).sort()) {
    const allowed = new Set(rules.allowed);
    const seen = new Set([file]);
    const queue = [file];
    for (let at = queue.shift(); at; at = queue.shift())
      for (const target of graph.get(at) ?? []) {
        if (!inFolder(target)) {
          if (!allowed.has(target)) found.push(`${file} -> ${target}${at === file ? '' : ` (through ${at})`}`);
        } else if (!seen.has(target)) {
          seen.add(target);
          queue.push(target);
        }
      }
  }
  return [...new Set(found)];
}
