import { execFile } from 'node:child_process';
import path from 'node:path';

/** The three files pocketsphinx decodes with: acoustic model folder, language model, pronunciation dictionary. */
export interface PocketsphinxModel {
  hmm: string;
  lm: string;
  dict: string;
  /** The package and version the files belong to, when known (e.g. "pocketsphinx-en-us 0.8+5prealpha+1-15"). */
  version?: string;
}

function run(program: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) =>
    execFile(program, args, { timeout: 10_000, encoding: 'utf8', maxBuffer: 4 * 1024 * 1024 }, (error, stdout) =>
      resolve(error ? null : stdout),
    ),
  );
}

/** The installed version of a Debian package, or null. */
export async function debianPackageVersion(packageName: string): Promise<string | null> {
  return (await run('dpkg-query', ['-W', '-f', '${Version}', packageName]))?.trim() || null;
}

/**
 * The US English model as Debian's package `pocketsphinx-en-us` installed it, read from the package's file
 * list (`dpkg-query -L`), not from fixed paths: its folder holding `mdef` (acoustic model), its word
 * `.lm.bin` and its `.dict`. Null when dpkg-query or the package is not there (pocketsphinx then uses its built-in
 * default paths).
 */
export async function findDebianPocketsphinxModel(
  packageName = 'pocketsphinx-en-us',
): Promise<PocketsphinxModel | null> {
  const files = (await run('dpkg-query', ['-L', packageName]))?.split('\n').map((line) => line.trim());
  if (!files) return null;
  const mdef = files.find((file) => path.basename(file) === 'mdef');
  // The word language model is named after the acoustic model's folder (en-us/ and en-us.lm.bin); the package
  // also ships a phone language model (en-us-phone.lm.bin), which recognises phones, not words.
  const models = files.filter((file) => file.endsWith('.lm.bin'));
  const lm =
    models.find((file) => mdef && path.basename(file) === `${path.basename(path.dirname(mdef))}.lm.bin`) ??
    models.find((file) => !path.basename(file).includes('phone'));
  const dict = files.find((file) => file.endsWith('.dict'));
  if (!mdef || !lm || !dict) return null;
  const version = await debianPackageVersion(packageName);
  return { hmm: path.dirname(mdef), lm, dict, ...(version ? { version: `${packageName} ${version}` } : {}) };
}
