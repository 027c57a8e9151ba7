import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../scripts/stack/paths';

/** Writes bench/results/<name>.json (the figures) and <name>.md (the same, to read). */
export function writeBenchResults(name: string, result: unknown, markdownLines: readonly string[]): void {
  const resultsDir = path.join(projectRoot, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(path.join(resultsDir, `${name}.md`), markdownLines.join('\n'));
}

/** The machine a result was measured on, as the results files record it: its CPUs, Node and load at the time. */
export function benchMachine() {
  return { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadAverage: os.loadavg() };
}
