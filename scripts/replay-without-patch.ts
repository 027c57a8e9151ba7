// `npx tsx scripts/replay-without-patch.ts [id ...]`: which committed histories take a patch's old branch
// (docs/patch-register.md#how-the-history-lists-are-found). For each registered patch still asked with patched() (or
// those named), it copies workflows/ with that one call replaced by deprecatePatch() and true (the old branch gone, as
// retiring it would leave the code), bundles the copy and replays every history of test/histories/ against it: those
// that fail are the patch's old-path histories. It prints them and exits 1 where they differ from the register's
// oldPathIn. About 20 s per patch (a workflow bundle each); test/patch-register.test.ts checks the cheaper rest.
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { PATCHES } from '../lib/temporal/patches';
import { projectRoot } from './stack/paths';

Runtime.install({ logger: new DefaultLogger('ERROR') });

const historiesDir = path.join(projectRoot, 'test/histories');
// Beside workflows/, so that the copy's relative imports of lib/ resolve as the original's do.
const variantDir = path.join(projectRoot, '.replay-without-patch');
const names = process.argv.slice(2);
const chosen = Object.entries(PATCHES).filter(
  ([, patch]) => patch.status === 'patched' && (names.length === 0 || names.includes(patch.id)),
);
const histories = readdirSync(historiesDir)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => ({
    workflowId: file.replace(/\.json$/, ''),
    history: historyFromJSON(JSON.parse(readFileSync(path.join(historiesDir, file), 'utf8'))),
  }));

let mismatches = 0;
try {
  for (const [name, patch] of chosen) {
    rmSync(variantDir, { recursive: true, force: true });
    cpSync(path.join(projectRoot, 'workflows'), variantDir, { recursive: true });
    const call = new RegExp(`\\bpatched\\(\\s*PATCHES\\.${name}\\.id,?\\s*\\)`, 'g');
    let replaced = 0;
    for (const file of readdirSync(variantDir, { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('.ts'),
    )) {
      const source = readFileSync(path.join(variantDir, file), 'utf8');
      const found = source.match(call)?.length ?? 0;
      if (found === 0) continue;
      replaced += found;
      writeFileSync(
        path.join(variantDir, file),
        `import { deprecatePatch as retiredPatch } from '@temporalio/workflow';\n${source.replace(
          call,
          `(retiredPatch(PATCHES.${name}.id), true)`,
        )}`,
      );
    }
    if (replaced === 0) throw new Error(`${patch.id}: no patched(PATCHES.${name}.id) in workflows/`);
    const failing: string[] = [];
    for await (const result of Worker.runReplayHistories(
      { workflowsPath: path.join(variantDir, 'index.ts') },
      histories,
    ))
      if (result.error) failing.push(result.workflowId);
    const expected = [...patch.oldPathIn].sort();
    const same = JSON.stringify(failing.sort()) === JSON.stringify(expected);
    if (!same) mismatches++;
    console.log(
      `${patch.id}: ${failing.join(' ') || '(none)'}${same ? '' : `  [register says: ${expected.join(' ')}]`}`,
    );
  }
} finally {
  rmSync(variantDir, { recursive: true, force: true });
}
process.exit(mismatches ? 1 : 0);
