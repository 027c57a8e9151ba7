// The manual (docs/, indexed by docs/README.md) is cited from code comments by repo-root path and heading anchor,
// e.g. docs/features/credits.md#credits. These tests fail, naming file:line, when a cited page or anchor does not
// exist, and when a README section is cited by its title again; and they check the checker itself on fixtures.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkCitations,
  citingFiles,
  formatProblems,
  githubAnchors,
  githubSlug,
  isCitingFile,
} from './support/docs-citations';

const projectRoot = path.resolve(import.meta.dirname, '..');
const OLD_STYLE = 'cites a README section by its title';

/**
 * Migrations already applied keep their text byte for byte: Prisma records each one's checksum when it applies it,
 * and an edited one is "modified after it was applied" for every database that has it. These two cite README
 * sections the old way and stay as they are; the pages are docs/features/credits.md and docs/features/sheets.md.
 */
const APPLIED_MIGRATIONS_AS_WRITTEN = [
  'prisma/migrations/20261125060202_immutable_credit_ledger/migration.sql',
  'prisma/migrations/20261125145018_live_sheets/migration.sql',
];

/**
 * Applied migrations (as written, above) that cite a section since moved to a page of its own when a long page was
 * split: each citation and where its section is now. The test holds the new address to a page and heading that exist.
 */
const MOVED_SINCE_APPLIED: { file: string; page: string; anchor: string; now: string }[] = [
  {
    file: 'prisma/migrations/20261127130500_call_progress_heap_only/migration.sql',
    page: 'docs/benchmarks.md',
    anchor: 'intake-npm-run-benchintake',
    now: 'docs/benchmarks/intake.md#b-carrier-events-group-commit-and-heap-only-progress-branch-intake-events',
  },
  {
    file: 'prisma/migrations/20261127175419_carrier_connection_auth_token_set/migration.sql',
    page: 'docs/features/carriers.md',
    anchor: 'callbacks-of-an-api-key-connection',
    now: 'docs/features/carriers/twilio.md#callbacks-of-an-api-key-connection',
  },
];
const movedCitation = (problem: { file: string; message: string }) =>
  MOVED_SINCE_APPLIED.some(
    ({ file, page, anchor }) => problem.file === file && problem.message.startsWith(`${page}#${anchor}: `),
  );

/** Every markdown page of docs/, repo-root relative. */
function docsPages(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(projectRoot, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? walk(path.posix.join(dir, entry.name))
        : entry.name.endsWith('.md')
          ? [path.posix.join(dir, entry.name)]
          : [],
    );
  return walk('docs').sort();
}

describe('citations of the manual in the repository', () => {
  const files = citingFiles(projectRoot);
  const problems = checkCitations(projectRoot, files);

  it('scans the sources, scripts, configs, schema, Dockerfile, CI entry point and markdown', () => {
    for (const file of [
      'README.md',
      'docs/README.md',
      'lib/config.ts',
      'scripts/start.sh',
      'docker-compose.yml',
      'prisma/schema.prisma',
      'Dockerfile',
      '.ci/run',
      'test/docs-citations.test.ts',
    ])
      expect(files).toContain(file);
    expect(files.some((file) => file.startsWith('node_modules/'))).toBe(false);
  });

  it('cites only pages that exist, and anchors that are headings of them; no README section by its title', () => {
    const unexcused = problems.filter(
      (problem) =>
        !(APPLIED_MIGRATIONS_AS_WRITTEN.includes(problem.file) && problem.message.startsWith(OLD_STYLE)) &&
        !movedCitation(problem),
    );
    expect(formatProblems(unexcused)).toEqual([]);
  });

  it('excuses citations of moved sections in applied migrations only while broken, and their sections exist', () => {
    for (const { file, page, anchor, now } of MOVED_SINCE_APPLIED) {
      expect(problems.filter((problem) => problem.file === file).map((problem) => problem.message)).toEqual([
        expect.stringContaining(`${page}#${anchor}: `),
      ]);
      const [newPage, newAnchor] = now.split('#');
      expect(githubAnchors(readFileSync(path.join(projectRoot, newPage!), 'utf8'))).toContain(newAnchor);
    }
  });

  it('excuses only applied migrations that still cite the old way (drop one from the list once it does not)', () => {
    for (const migration of APPLIED_MIGRATIONS_AS_WRITTEN)
      expect(problems.filter((problem) => problem.file === migration).map((problem) => problem.message)).toEqual([
        expect.stringContaining(OLD_STYLE),
      ]);
  });
});

describe('the manual', () => {
  it('docs/README.md links every page of docs/', () => {
    const index = readFileSync(path.join(projectRoot, 'docs/README.md'), 'utf8');
    const linked = new Set(
      [...index.matchAll(/\]\(([^)#\s]+\.md)(?:#[^)]*)?\)/g)].map((link) =>
        path.posix.normalize(path.posix.join('docs', link[1]!)),
      ),
    );
    expect(docsPages().filter((page) => page !== 'docs/README.md' && !linked.has(page))).toEqual([]);
  });

  it('every page starts with its title, then a one-line summary', () => {
    const malformed = docsPages().filter((page) => {
      const [title, gap, summary, after] = readFileSync(path.join(projectRoot, page), 'utf8').split('\n');
      return !(/^# \S/.test(title!) && gap === '' && /^[^#|\-`>\s]/.test(summary ?? '') && after === '');
    });
    expect(malformed).toEqual([]);
  });

  it('the README stays short: at most 300 lines', () => {
    expect(readFileSync(path.join(projectRoot, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300);
  });
});

describe('the checker, on fixtures', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docs-citations-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // Built from parts, so that this file itself cites nothing and no README section.
  const DOCS = 'docs';
  const README = 'READ' + 'ME';
  const write = (file: string, lines: string[]) => {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), lines.join('\n'));
  };

  it('computes GitHub anchors: punctuation dropped, spaces to hyphens, repeats numbered, code blocks skipped', () => {
    expect(githubSlug('Production-shaped cluster (`npm run start:cluster`, `npm run test:cluster`)')).toBe(
      'production-shaped-cluster-npm-run-startcluster-npm-run-testcluster',
    );
    expect(githubSlug("Sizing the worker's memory")).toBe('sizing-the-workers-memory');
    expect(githubSlug("Orders: from the [store](x.md)'s webhooks to GET /commerce/orders")).toBe(
      'orders-from-the-stores-webhooks-to-get-commerceorders',
    );
    expect(githubSlug('API decisions where the spec says "not shown"')).toBe(
      'api-decisions-where-the-spec-says-not-shown',
    );
    expect(githubSlug('snake_case & Café')).toBe('snake_case--café');
    expect(
      githubAnchors(
        [
          '# Title',
          '## Setup',
          '```sh',
          '# a comment, not a heading',
          '```',
          '## Setup',
          '### Setup',
          '#no-space is no heading',
          '## Setup-1',
          '## Closed ##',
        ].join('\n'),
      ),
    ).toEqual(['title', 'setup', 'setup-1', 'setup-2', 'setup-1-1', 'closed']);
  });

  it('names the file and line of a missing page, a missing anchor and a README section cited by title', () => {
    write(`${DOCS}/page.md`, [
      '# Page',
      '',
      'The page.',
      '',
      '## Run it: `npm start`',
      '',
      '## Run it: `npm start`',
      '',
      '```sh',
      '# not a heading',
      '```',
    ]);
    write(`${README}.md`, ['# Product', '', '## Run it']);
    write('src/code.ts', [
      `// fine: (${DOCS}/page.md), (${DOCS}/page.md#run-it-npm-start), (${DOCS}/page.md#run-it-npm-start-1).`,
      `// a page that does not exist: ${DOCS}/nope.md#page`,
      `// an anchor that is not a heading: ${DOCS}/page.md#run-it and ${DOCS}/page.md#not-a-heading`,
      `// the old way: ${README} "Run it"`,
      `/* the old way over two lines: (${README}`,
      ` * "Run it") */`,
      `// ${README}.md#run-it is fine, ${README}.md#nope is not; https://example.com/${DOCS}/nope.md is a URL`,
      `// lib/${DOCS}/nope.md is another folder's, api/routes/${DOCS}.ts no page at all`,
    ]);
    write(`${DOCS}/other.md`, [
      '# Other',
      '',
      'Links: [fine](page.md#run-it-npm-start), [here](#other), [up](../src/code.ts), [web](https://example.com/x.md),',
      '[no page](gone.md), [no anchor](page.md#run-it-npm-start-2), [no file](../src/gone.ts), [over',
      'two lines](#nowhere). `[in code](gone.md)`',
      '',
      '```md',
      '[in a code block](gone.md)',
      '```',
    ]);
    const problems = checkCitations(dir, ['src/code.ts', `${DOCS}/other.md`, `${DOCS}/page.md`, `${README}.md`]);
    expect(formatProblems(problems)).toEqual([
      `src/code.ts:2: ${DOCS}/nope.md#page: no page ${DOCS}/nope.md`,
      `src/code.ts:3: ${DOCS}/page.md#run-it: ${DOCS}/page.md has no heading with the anchor #run-it`,
      `src/code.ts:3: ${DOCS}/page.md#not-a-heading: ${DOCS}/page.md has no heading with the anchor #not-a-heading`,
      `src/code.ts:7: ${README}.md#nope: ${README}.md has no heading with the anchor #nope`,
      `src/code.ts:4: ${OLD_STYLE}: cite the docs page by path and anchor (docs/<page>.md#<anchor>)`,
      `src/code.ts:5: ${OLD_STYLE}: cite the docs page by path and anchor (docs/<page>.md#<anchor>)`,
      `${DOCS}/other.md:4: link gone.md: no page ${DOCS}/gone.md`,
      `${DOCS}/other.md:4: link page.md#run-it-npm-start-2: ${DOCS}/page.md has no heading with the anchor #run-it-npm-start-2`,
      `${DOCS}/other.md:4: link ../src/gone.ts: no file src/gone.ts`,
      `${DOCS}/other.md:5: link #nowhere: ${DOCS}/other.md has no heading with the anchor #nowhere`,
    ]);
  });

  it('finds nothing wrong once the citations are fixed', () => {
    write('src/code.ts', [`// (${DOCS}/page.md#run-it-npm-start-1), ${README}.md#run-it`]);
    write(`${DOCS}/other.md`, ['# Other', '', `[back](page.md#run-it-npm-start), [home](../${README}.md#product)`]);
    expect(checkCitations(dir, ['src/code.ts', `${DOCS}/other.md`, `${DOCS}/page.md`, `${README}.md`])).toEqual([]);
  });

  it('takes sources, scripts, configs, SQL, the schema, the Dockerfile and markdown, not data or images', () => {
    for (const file of ['a.ts', 'b.mjs', 'c.js', 'd.sh', 'e.yml', 'f.yaml', 'g.prisma', 'h.sql', 'Dockerfile', 'i.md'])
      expect(isCitingFile(`x/${file}`)).toBe(true);
    expect(isCitingFile('.ci/run')).toBe(true);
    for (const file of ['a.json', 'b.png', 'c.mp3', 'package-lock.json']) expect(isCitingFile(file)).toBe(false);
  });
});
