// The map the manual and the comments draw of the code, checked against the code: a repo path they name (api/...,
// lib/..., test/..., ...) must exist, and a workflow type they name (leadLadderWorkflowV2, ...) must be one that
// workflows/index.ts exports. docs/architecture.md is held to more: it names every workflow type, every simulator and
// every feature folder. See docs/where-code-goes.md.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import type { CitationProblem } from './docs-citations';

/** The top-level folders whose paths the manual and the comments name. */
export const MAPPED_FOLDERS = [
  'api',
  'lib',
  'workflows',
  'activities',
  'worker',
  'simulators',
  'test',
  'scripts',
  'bench',
  'cli',
  'prisma',
  'vendor',
  'docs',
] as const;

/**
 * A repo-root path into one of MAPPED_FOLDERS: not part of a longer path, a URL or a package name, and up to the
 * first character that cannot be in one (a space, a quote, a bracket, a #anchor, a :line).
 */
const REPO_PATH = new RegExp(`(?<![\\w./@:~$-])((?:${MAPPED_FOLDERS.join('|')})/[\\w./-]*)`, 'g');
/** What follows a placeholder or a pattern rather than a path: lib/<feature>/, test/*.test.ts, lib/${name}. */
const NOT_A_PATH_AFTER = /^[<*{$[]/;

/** The repo paths a text names, each with its offset; placeholders and globs are not paths. */
export function repoPathsIn(text: string): { path: string; index: number }[] {
  const found: { path: string; index: number }[] = [];
  for (const match of text.matchAll(REPO_PATH)) {
    const named = match[1]!.replace(/[.-]+$/, '');
    if (NOT_A_PATH_AFTER.test(text.slice(match.index + match[0].length))) continue;
    found.push({ path: named, index: match.index });
  }
  return found;
}

/** A workflow type as the code names one: camelCase, ending in Workflow, maybe a version (leadLadderWorkflowV2). */
const WORKFLOW_NAME = /(?<![\w$.])([a-z][A-Za-z0-9]*Workflow(?:V\d+)?)(?![\w$])/g;

export function workflowNamesIn(text: string): { name: string; index: number }[] {
  return [...text.matchAll(WORKFLOW_NAME)].map((match) => ({ name: match[1]!, index: match.index }));
}

/** The workflow types the worker registers: the names workflows/index.ts exports. */
export function registeredWorkflowTypes(root: string): string[] {
  const index = readFileSync(path.join(root, 'workflows/index.ts'), 'utf8');
  return [...index.matchAll(/^export\s*\{([^}]*)\}/gm)].flatMap((match) =>
    match[1]!
      .split(',')
      .map((name) =>
        name
          .trim()
          .split(/\s+as\s+/)
          .pop()!,
      )
      .filter(Boolean),
  );
}

/** The parts of a file that are prose about the code: a markdown page whole, a source's comments. A part keeps its
 * offset in the file, so that a problem names its line. */
export function commentsOf(file: string, text: string): { text: string; index: number }[] {
  if (file.endsWith('.md')) return [{ text, index: 0 }];
  if (/\.[cm]?[jt]s$/.test(file)) {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
    const comments = new Map<number, { text: string; index: number }>();
    const take = (ranges: ts.CommentRange[] | undefined) => {
      for (const range of ranges ?? [])
        comments.set(range.pos, { text: text.slice(range.pos, range.end), index: range.pos });
    };
    const visit = (node: ts.Node) => {
      take(ts.getLeadingCommentRanges(text, node.pos));
      take(ts.getTrailingCommentRanges(text, node.end));
      ts.forEachChild(node, visit);
    };
    // A file's first comments lead its first statement; a shebang is no comment.
    take(ts.getLeadingCommentRanges(text, ts.getShebang(text)?.length ?? 0));
    visit(source);
    return [...comments.values()].sort((a, b) => a.index - b.index);
  }
  const marker = file.endsWith('.sql') ? '--' : file.endsWith('.prisma') ? '//' : '#';
  const parts: { text: string; index: number }[] = [];
  let offset = 0;
  for (const line of text.split('\n')) {
    const at = line.indexOf(marker);
    if (at !== -1 && (marker !== '#' || at === 0 || /\s/.test(line[at - 1]!)))
      parts.push({ text: line.slice(at), index: offset + at });
    offset += line.length + 1;
  }
  return parts;
}

/** Files whose comments draw the map: sources, scripts, the schema, SQL, configs and markdown. */
export function isMapFile(file: string): boolean {
  return /\.(?:[cm]?[jt]s|sh|ya?ml|prisma|sql|md)$/.test(file) || path.posix.basename(file) === 'Dockerfile';
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line += 1;
  return line;
}

/**
 * Every repo path named in `files`' comments (a markdown page: its whole text) that does not exist under `root`, and
 * every workflow type named there that is neither registered (`workflowTypes`) nor a name the code declares
 * (`declared`: startWorkflow and its kin are functions, not workflow types).
 */
export function checkMap(
  root: string,
  files: string[],
  workflowTypes: readonly string[],
  declared: ReadonlySet<string>,
): CitationProblem[] {
  const registered = new Set(workflowTypes);
  const problems: CitationProblem[] = [];
  for (const file of files) {
    const text = readFileSync(path.join(root, file), 'utf8');
    for (const part of commentsOf(file, text)) {
      for (const named of repoPathsIn(part.text))
        if (!existsSync(path.join(root, named.path)))
          problems.push({
            file,
            line: lineOf(text, part.index + named.index),
            message: `${named.path}: no such file or folder`,
          });
      for (const named of workflowNamesIn(part.text))
        if (!registered.has(named.name) && !declared.has(named.name))
          problems.push({
            file,
            line: lineOf(text, part.index + named.index),
            message: `${named.name}: no workflow of that type (workflows/index.ts)`,
          });
    }
  }
  return problems;
}

/** The names that `files` declare (functions, classes, variables, types, interfaces, methods), comments aside. */
export function declaredNames(root: string, files: string[]): Set<string> {
  const names = new Set<string>();
  const declaration =
    /\b(?:function\*?|class|const|let|var|type|interface|enum)\s+([A-Za-z_$][\w$]*)|^\s*(?:async\s+)?([A-Za-z_$][\w$]*)\s*\(/gm;
  for (const file of files.filter((name) => /\.[cm]?[jt]s$/.test(name))) {
    const text = readFileSync(path.join(root, file), 'utf8');
    for (const match of text.matchAll(declaration)) names.add(match[1] ?? match[2]!);
  }
  return names;
}
