// Citations of the manual (docs/) in the sources, checked against the pages themselves: a comment that cites
// docs/<page>.md#<anchor> must name a page that exists and a heading of that page, and no citation of a README
// section by its title may come back (the README is short now; its sections are docs pages). See docs/README.md.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';

export type CitationProblem = { file: string; line: number; message: string };

/** The files that may cite the manual: sources, scripts, configs, SQL, the schema, the Dockerfile, markdown. */
const CITING_EXTENSIONS = [
  '.ts',
  '.mts',
  '.cts',
  '.mjs',
  '.cjs',
  '.js',
  '.sh',
  '.yml',
  '.yaml',
  '.prisma',
  '.sql',
  '.md',
];

export function isCitingFile(file: string): boolean {
  const base = path.posix.basename(file);
  return (
    CITING_EXTENSIONS.some((extension) => base.endsWith(extension)) || base === 'Dockerfile' || file.startsWith('.ci/')
  );
}

/** The repository's files that may cite the manual: tracked, or new and not ignored (git ls-files). */
export function citingFiles(root: string): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const files = new Set(listed.split('\0').filter(Boolean));
  return [...files].filter((file) => {
    if (!isCitingFile(file)) return false;
    const full = path.join(root, file);
    return existsSync(full) && lstatSync(full).isFile();
  });
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX_HEADING = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;

/** A heading's text as GitHub renders it: links and images by their text, code without backticks, no HTML. */
function renderedText(heading: string): string {
  return heading
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*~]/g, '')
    .trim();
}

/** GitHub's anchor of a heading's text (github-slugger): lower case, punctuation and symbols dropped except
 * hyphens and underscores, each space a hyphen. */
export function githubSlug(text: string): string {
  return renderedText(text)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Each line of a markdown text, with the lines of fenced code blocks (fences included) blanked. */
function outsideCode(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const fenceMatch = FENCE.exec(line);
    if (fenceMatch) {
      const marker = fenceMatch[1]!;
      if (fence === undefined) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return '';
    }
    return fence === undefined ? line : '';
  });
}

/** The anchors of a markdown page's headings, in order; a repeated one gets -1, -2, … as on GitHub
 * (github-slugger's occurrences). Lines in fenced code blocks are not headings. */
export function githubAnchors(markdown: string): string[] {
  const occurrences = new Map<string, number>();
  const anchors: string[] = [];
  for (const line of outsideCode(markdown)) {
    const heading = ATX_HEADING.exec(line);
    if (!heading) continue;
    const original = githubSlug(heading[1] ?? '');
    let anchor = original;
    while (occurrences.has(anchor)) {
      occurrences.set(original, occurrences.get(original)! + 1);
      anchor = `${original}-${occurrences.get(original)}`;
    }
    occurrences.set(anchor, 0);
    anchors.push(anchor);
  }
  return anchors;
}

/** docs/<page>.md or README.md, by repo-root path, with an optional #anchor; not part of a longer path or URL. */
const CITATION = /(?<![\w./-])(docs\/[\w./-]*?\.md|README\.md)\b(?:#([\p{L}\p{M}\p{N}_-]+))?/gu;
/** The word README, then (after spaces, comment markers or a line break) a quoted title or a link: a README
 * section cited by its title, the way the sources cited them before the manual. */
const OLD_STYLE = /\bREADME(?:'s)?(?:[ \t\r\n*#]|\/\/|--)*["[]/g;
/** A markdown link's target: [text](target) or [text](target "title"); the text may span lines. */
const MARKDOWN_LINK = /\[[^[\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line += 1;
  return line;
}

/** Every broken citation of the manual in `files` (paths relative to `root`), and every citation of a README
 * section by title. */
export function checkCitations(root: string, files: string[]): CitationProblem[] {
  const anchorsOf = new Map<string, Set<string> | null>();
  const pageAnchors = (page: string) => {
    if (!anchorsOf.has(page)) {
      const full = path.join(root, page);
      anchorsOf.set(
        page,
        existsSync(full) && lstatSync(full).isFile() ? new Set(githubAnchors(readFileSync(full, 'utf8'))) : null,
      );
    }
    return anchorsOf.get(page)!;
  };
  const problems: CitationProblem[] = [];
  const seen = new Set<string>();
  const report = (file: string, line: number, message: string) => {
    const key = `${file}:${line}:${message}`;
    if (seen.has(key)) return;
    seen.add(key);
    problems.push({ file, line, message });
  };
  /** A page (repo-root path) and anchor cited at file:line. */
  const checkTarget = (file: string, line: number, page: string, anchor: string | undefined, cited: string) => {
    if (page.startsWith('..') || path.isAbsolute(page)) return report(file, line, `${cited}: outside the repository`);
    const anchors = pageAnchors(page);
    if (anchors === null) return report(file, line, `${cited}: no page ${page}`);
    if (anchor !== undefined && !anchors.has(anchor))
      report(file, line, `${cited}: ${page} has no heading with the anchor #${anchor}`);
  };

  for (const file of files) {
    const text = readFileSync(path.join(root, file), 'utf8');
    for (const match of text.matchAll(CITATION))
      checkTarget(file, lineOf(text, match.index), match[1]!, match[2], match[0]);
    for (const match of text.matchAll(OLD_STYLE))
      report(
        file,
        lineOf(text, match.index),
        'cites a README section by its title: cite the docs page by path and anchor (docs/<page>.md#<anchor>)',
      );
    if (!file.endsWith('.md')) continue;
    // The links of a markdown page, outside code: to a page (relative to this one), a heading of it, or a file.
    const prose = outsideCode(text)
      .map((line) => line.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length)))
      .join('\n');
    for (const link of prose.matchAll(MARKDOWN_LINK)) {
      const target = link[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
      const line = lineOf(prose, link.index + link[0].length - 1);
      const hash = target.indexOf('#');
      const linkPath = hash === -1 ? target : target.slice(0, hash);
      let anchor = hash === -1 ? undefined : target.slice(hash + 1);
      try {
        anchor = anchor === undefined ? undefined : decodeURIComponent(anchor);
      } catch {
        // not percent-encoded: compared as written
      }
      const resolved =
        linkPath === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), linkPath));
      if (resolved.endsWith('.md')) checkTarget(file, line, resolved, anchor, `link ${target}`);
      else if (!existsSync(path.join(root, resolved))) report(file, line, `link ${target}: no file ${resolved}`);
    }
  }
  return problems;
}

export const formatProblems = (problems: CitationProblem[]) =>
  problems.map(({ file, line, message }) => `${file}:${line}: ${message}`);
