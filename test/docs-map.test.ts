// The map is true: docs/architecture.md names every workflow type the worker registers, the one a new lead of each
// kind starts and the one a journey's call node starts, every simulator and every feature folder; no docs page and no
// code comment names a repo path that does not exist or a workflow type that no workflow exports; no docs page is
// longer than 500 lines. And the checker can fail, on fixtures.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { citingFiles, formatProblems } from './support/docs-citations';
import {
  checkMap,
  commentsOf,
  declaredNames,
  isMapFile,
  registeredWorkflowTypes,
  repoPathsIn,
  workflowNamesIn,
} from './support/docs-map';

const projectRoot = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(projectRoot, file), 'utf8');
const architecture = read('docs/architecture.md');
const MAX_PAGE_LINES = 500;

const folders = (dir: string) =>
  readdirSync(path.join(projectRoot, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

function docsPages(dir = 'docs'): string[] {
  return readdirSync(path.join(projectRoot, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? docsPages(path.posix.join(dir, entry.name))
      : entry.name.endsWith('.md')
        ? [path.posix.join(dir, entry.name)]
        : [],
  );
}

describe('docs/architecture.md', () => {
  it('names every workflow type the worker registers (workflows/index.ts)', () => {
    const types = registeredWorkflowTypes(projectRoot);
    expect(types.length).toBeGreaterThan(10);
    expect(types.filter((type) => !architecture.includes(`\`${type}\``))).toEqual([]);
  });

  it('says which workflow type a new CLASSIC, WHATSAPP and JOURNEY lead starts, as lib/temporal/ starts them', () => {
    const classic = /LEAD_LADDER_WORKFLOW = '(\w+)'/.exec(read('lib/temporal/workflow-contracts.ts'))?.[1];
    const starts = read('lib/temporal/start-lead-workflow.ts');
    expect(starts).toContain(`startWorkflow(temporal, 'leadMessageWorkflow'`);
    expect(starts).toContain(`startWorkflow(temporal, 'journeyRunWorkflow'`);
    expect(architecture).toMatch(new RegExp(`new CLASSIC lead[^.]*\`${classic}\``));
    expect(architecture).toMatch(/new WHATSAPP lead[^.]*`leadMessageWorkflow`/);
    expect(architecture).toMatch(/new JOURNEY lead[^.]*`journeyRunWorkflow`/);
  });

  it("says which workflow type a journey's call node starts, as workflows/journeys/journey-run.ts starts it", () => {
    // The newest patch is asked first: the type its branch gives is the one a new run starts.
    const callNodeChild = /const ladder = patched\(PATCHES\.\w+\.id\)\s*\?\s*(\w+)/.exec(
      read('workflows/journeys/journey-run.ts'),
    )?.[1];
    expect(callNodeChild).toBeDefined();
    expect(architecture).toMatch(new RegExp(`journey's call node runs[^.]*\`${callNodeChild}\``));
  });

  it('names every simulator and every folder of api/, workflows/, activities/ and lib/', () => {
    const unnamed = [
      ...folders('simulators')
        .map((name) => `simulators/${name}/`)
        .filter((folder) => !architecture.includes(folder)),
      ...['api', 'workflows', 'activities', 'lib'].flatMap((layer) =>
        folders(layer)
          .filter((name) => !architecture.includes(`\`${name}\``) && !architecture.includes(`${layer}/${name}/`))
          .map((name) => `${layer}/${name}/`),
      ),
    ];
    expect(unnamed).toEqual([]);
  });
});

/**
 * Applied migrations keep their text byte for byte (Prisma checks each one's checksum against every database that has
 * it, test/docs-citations.test.ts says more), so a path they name stays as written when its folder moves: each such
 * path and where it is now. The test holds the new path to one that exists, and the excuse to paths still missing.
 */
const MOVED_SINCE_APPLIED: { file: string; path: string; now: string }[] = [
  {
    file: 'prisma/migrations/20261207090000_meta_twin_own_schema/migration.sql',
    path: 'simulators/whatsapp/',
    now: 'simulators/meta-twin/',
  },
  {
    file: 'prisma/migrations/20261207090000_meta_twin_own_schema/migration.sql',
    path: 'simulators/whatsapp/store.ts',
    now: 'simulators/meta-twin/store.ts',
  },
];
const movedSinceApplied = (problem: { file: string; message: string }) =>
  MOVED_SINCE_APPLIED.some(
    (moved) => problem.file === moved.file && problem.message === `${moved.path}: no such file or folder`,
  );

describe('the map the manual and the comments draw', () => {
  const files = citingFiles(projectRoot).filter(isMapFile);
  const declared = declaredNames(
    projectRoot,
    files.filter((file) => !file.startsWith('test/') || file.startsWith('test/support/')),
  );
  const problems = checkMap(projectRoot, files, registeredWorkflowTypes(projectRoot), declared);

  it('reads the pages, the sources, the schema, the SQL and the scripts', () => {
    for (const file of ['docs/architecture.md', 'lib/config.ts', 'prisma/schema.prisma', 'scripts/start.sh'])
      expect(files).toContain(file);
  });

  it('names only repo paths that exist and workflow types that a workflow exports', () => {
    expect(formatProblems(problems.filter((problem) => !movedSinceApplied(problem)))).toEqual([]);
  });

  it('excuses paths in applied migrations only while they are missing, and their new paths exist', () => {
    for (const moved of MOVED_SINCE_APPLIED) {
      expect(problems.filter((problem) => problem.file === moved.file).map((problem) => problem.message)).toContain(
        `${moved.path}: no such file or folder`,
      );
      expect(existsSync(path.join(projectRoot, moved.now)), `${moved.now} (where ${moved.path} went)`).toBe(true);
    }
  });

  it(`has no docs page over ${MAX_PAGE_LINES} lines (one page per subject)`, () => {
    const long = docsPages()
      .map((page) => ({ page, lines: read(page).split('\n').length }))
      .filter(({ lines }) => lines > MAX_PAGE_LINES);
    expect(long).toEqual([]);
  });
});

describe('the map checker, on fixtures', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docs-map-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // Built from parts, so that this file itself names no missing path.
  const LIB = 'lib';
  const DOCS = 'docs';
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  };

  it('finds repo paths, not placeholders, globs, URLs or package paths', () => {
    expect(
      repoPathsIn(
        `${LIB}/a.ts, (api/b/), \`test/c.test.ts:12\` ${LIB}/<feature>/ test/*.test.ts ${LIB}/\${name} ` +
          `https://x.org/${LIB}/d.ts @temporalio/worker/${LIB}/e.js ${DOCS}/f.md#g. ${LIB}/h.`,
      ).map((named) => named.path),
    ).toEqual([`${LIB}/a.ts`, 'api/b/', 'test/c.test.ts', `${DOCS}/f.md`, `${LIB}/h`]);
    expect(
      workflowNamesIn('`leadLadderWorkflowV2`, startWorkflow(x), client.workflow.start, a.createWorkflow').map(
        (named) => named.name,
      ),
    ).toEqual(['leadLadderWorkflowV2', 'startWorkflow']);
  });

  it('reads a source’s comments, not its code', () => {
    const source = [
      `#!/usr/bin/env node`,
      `// one: ${LIB}/a.ts`,
      `const path = '${LIB}/not-a-comment.ts';`,
      `/** two: ${LIB}/b.ts */`,
      `export const x = 1; // three: ${LIB}/c.ts`,
    ].join('\n');
    expect(commentsOf('x.ts', source).flatMap((part) => repoPathsIn(part.text).map((named) => named.path))).toEqual([
      `${LIB}/a.ts`,
      `${LIB}/b.ts`,
      `${LIB}/c.ts`,
    ]);
    expect(commentsOf('x.sql', `SELECT 1; -- ${LIB}/a.ts`).map((part) => part.text)).toEqual([`-- ${LIB}/a.ts`]);
  });

  it('names the file and line of a missing path and of a workflow type no workflow exports', () => {
    write(`${LIB}/here.ts`, '');
    write(
      'workflows/index.ts',
      `export { oneWorkflow } from './one';\nexport { twoWorkflowV2 as twoWorkflowV2 } from './two';\n`,
    );
    write(
      `${DOCS}/page.md`,
      [
        '# Page',
        '',
        `A lead runs \`oneWorkflow\` or \`twoWorkflowV2\`, started by startWorkflow; the code is in \`${LIB}/here.ts\`.`,
        `Not \`goneWorkflow\`, nor ${LIB}/gone.ts, nor api/services/.`,
      ].join('\n'),
    );
    write(
      `${LIB}/code.ts`,
      [`// See ${LIB}/here.ts and ${LIB}/gone/.`, `const oneWorkflow = '${LIB}/in-code.ts';`].join('\n'),
    );
    const types = registeredWorkflowTypes(dir);
    expect(types).toEqual(['oneWorkflow', 'twoWorkflowV2']);
    const problems = checkMap(dir, [`${DOCS}/page.md`, `${LIB}/code.ts`], types, new Set(['startWorkflow']));
    expect(formatProblems(problems)).toEqual([
      `${DOCS}/page.md:4: ${LIB}/gone.ts: no such file or folder`,
      `${DOCS}/page.md:4: api/services/: no such file or folder`,
      `${DOCS}/page.md:4: goneWorkflow: no workflow of that type (workflows/index.ts)`,
      `${LIB}/code.ts:1: ${LIB}/gone/: no such file or folder`,
    ]);
  });

  it('finds nothing wrong once the map is fixed', () => {
    write(
      `${DOCS}/page.md`,
      ['# Page', '', `A lead runs \`oneWorkflow\`; the code is in \`${LIB}/here.ts\`.`].join('\n'),
    );
    write(`${LIB}/code.ts`, `// See ${LIB}/here.ts.\n`);
    expect(checkMap(dir, [`${DOCS}/page.md`, `${LIB}/code.ts`], ['oneWorkflow'], new Set())).toEqual([]);
  });

  it('takes sources, scripts, the schema, SQL, configs and markdown; not data', () => {
    for (const file of ['a.ts', 'b.mjs', 'c.sh', 'd.yml', 'e.prisma', 'f.sql', 'g.md', 'Dockerfile'])
      expect(isMapFile(`x/${file}`)).toBe(true);
    for (const file of ['a.json', 'b.png', 'package-lock.json']) expect(isMapFile(file)).toBe(false);
  });
});
