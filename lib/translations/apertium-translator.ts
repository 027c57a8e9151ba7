import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { canonicalLanguage } from '../agents/agent-definition';
import { TranslationError, type InstalledPair, type TranslationPair, type Translator } from './translator';

export interface ApertiumOptions {
  /** The apertium program: a name on PATH or a path (APERTIUM_BIN). */
  apertiumPath: string;
  /** One run of apertium (one transcript) must be done within this (TRANSLATION_TIMEOUT_MS); then it is killed. */
  timeoutMs: number;
  /** dpkg-query, which names the Debian package (and version) of a pair's data; absent elsewhere: left out. */
  dpkgQueryPath?: string;
}

/** Transcripts are text; a run's output is a few times its input at most. */
const MAX_OUTPUT_BYTES = 32 * 1024 * 1024;

/** What a program wrote to stdout, run without a shell (arguments as an array), killed at the timeout. */
function run(program: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      program,
      args,
      { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const failure = error as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null };
        if (failure.code === 'ENOENT' || failure.code === 'EACCES')
          reject(new TranslationError(503, `${program} cannot be run: ${failure.code}`));
        else if (failure.killed || failure.signal === 'SIGKILL')
          reject(new TranslationError(504, `${program} stopped after ${timeoutMs} ms`));
        else reject(new TranslationError(500, `${program} failed: ${stderr.trim().split('\n')[0]?.slice(0, 200)}`));
      },
    );
  });
}

/**
 * apertium's translation of `text`. The text goes in a file of a private temporary folder, not stdin:
 * Debian's `apertium` is a shell script that opens /dev/stdin by name, which fails on the socket Node gives
 * a child as stdin (it then prints nothing and still exits 0). Nothing out for something in is a failure.
 */
async function translateText(program: string, mode: string, text: string, timeoutMs: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'apertium-'));
  try {
    const input = path.join(dir, 'input.txt');
    await writeFile(input, text, { mode: 0o600 });
    const output = await run(program, ['-u', mode, input], timeoutMs);
    if (output.trim() === '') throw new TranslationError(500, `${program} ${mode} answered nothing`);
    return output;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * One side of a mode name as a BCP 47 tag: the ISO 639-3 (or 639-1) code canonicalised (`spa` -> `es`); a
 * two-letter or three-digit qualifier is a region (`eng_US` -> `en-US`), any other a private-use subtag
 * (`oci_aran` -> `oc-x-aran`), so that it never reads as a script or collides with the plain language.
 */
export function modeSideTag(side: string): string | null {
  const match = /^([a-z]{2,3})(?:_([A-Za-z0-9]{1,8}))?$/.exec(side);
  if (!match) return null;
  const language = canonicalLanguage(match[1]!);
  if (!language) return null;
  const qualifier = match[2];
  if (!qualifier) return language;
  return canonicalLanguage(
    /^([A-Za-z]{2}|\d{3})$/.test(qualifier) ? `${language}-${qualifier}` : `${language}-x-${qualifier}`,
  );
}

/** A mode `apertium -l` lists (`eng-spa`, `spa-eng_US`) as a pair of tags; null for any other kind of mode. */
export function pairOfMode(mode: string): TranslationPair | null {
  const sides = mode.split('-');
  if (sides.length !== 2) return null;
  const [from, to] = sides.map(modeSideTag);
  return from && to && from !== to ? { from, to } : null;
}

/**
 * A turn as one paragraph: apertium's text format ends a paragraph at a blank line and never moves words
 * across it (it inserts a sentence end there, which `-n` would turn off: not used), so the turns of a
 * transcript go through one run, separated by blank lines. Control characters and line breaks within a
 * turn become spaces; nothing else is escaped (the text format's deformatter protects apertium's own
 * stream characters such as `^ $ [ ]`).
 */
const asParagraph = (text: string) => text.replace(/[\s\u0000-\u001f\u007f]+/g, ' ').trim();

const paragraphsOf = (output: string) =>
  output
    .split(/\n[ \t]*\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '');

/**
 * Debian's apertium. The pairs are the modes `apertium -l` lists from the installed data (pair packages
 * such as apertium-eng-spa), read once per process; `provider` names the engine's version, the mode and,
 * where dpkg knows it, the data package's version. Unknown words are left as they are, without apertium's
 * `*` mark (`-u`): a transcript reader sees the word, not markup.
 */
export function createApertiumTranslator(options: ApertiumOptions): Translator {
  const dpkgQuery = options.dpkgQueryPath ?? 'dpkg-query';
  const apertium = (args: readonly string[]) => run(options.apertiumPath, args, options.timeoutMs);

  /** `apertium-eng-spa 0.8.1-2` for a mode, or null where dpkg is absent or does not know the file. */
  async function dataPackageOf(mode: string): Promise<string | null> {
    try {
      const owner = await run(dpkgQuery, ['-S', `apertium/modes/${mode}.mode`], options.timeoutMs);
      const name = /^([a-z0-9][a-z0-9+.-]*):/m.exec(owner)?.[1];
      if (!name) return null;
      const version = await run(dpkgQuery, ['-W', '-f', '${Version}', name], options.timeoutMs);
      return `${name} ${version.trim()}`;
    } catch {
      return null;
    }
  }

  async function readPairs(): Promise<Array<InstalledPair & { mode: string }>> {
    const [listing, versionLine] = await Promise.all([apertium(['-l']), apertium(['-V'])]);
    const engine = `apertium ${versionLine.trim().replace(/^apertium\s+/i, '')}`;
    const modes = listing
      .split('\n')
      .map((line) => line.trim())
      .filter((mode) => pairOfMode(mode) !== null);
    return Promise.all(
      modes.map(async (mode) => {
        const data = await dataPackageOf(mode);
        return { ...pairOfMode(mode)!, mode, provider: data ? `${engine} ${mode} (${data})` : `${engine} ${mode}` };
      }),
    );
  }

  let installed: Promise<Array<InstalledPair & { mode: string }>> | undefined;
  const pairs = () => {
    // A failure is not remembered: apertium may be installed by the next request.
    installed ??= readPairs().catch((error: unknown) => {
      installed = undefined;
      throw error;
    });
    return installed;
  };

  /** One run over paragraphs; `deadline` bounds all the runs of one translation together. */
  const translateRun = async (mode: string, paragraphs: readonly string[], deadline: number) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new TranslationError(504, `apertium took over ${options.timeoutMs} ms`);
    return paragraphsOf(await translateText(options.apertiumPath, mode, `${paragraphs.join('\n\n')}\n`, remaining));
  };

  return {
    name: 'apertium',
    async pairs() {
      return (await pairs()).map(({ from, to, provider }) => ({ from, to, provider }));
    },
    async translate(texts, pair) {
      const mode = (await pairs()).find((candidate) => candidate.from === pair.from && candidate.to === pair.to)?.mode;
      if (!mode) throw new TranslationError(500, `apertium has no mode for ${pair.from} -> ${pair.to}`);
      const paragraphs = texts.map(asParagraph);
      const toTranslate = paragraphs.filter((paragraph) => paragraph !== '');
      if (toTranslate.length === 0) return paragraphs;
      const deadline = Date.now() + options.timeoutMs;
      let translated = await translateRun(mode, toTranslate, deadline);
      // Paragraphs did not come back one for one (a turn apertium reduced to nothing): one run per turn,
      // one after the other (each run is a pipeline of about ten processes).
      if (translated.length !== toTranslate.length) {
        translated = [];
        for (const paragraph of toTranslate)
          translated.push((await translateRun(mode, [paragraph], deadline)).join(' '));
      }
      let next = 0;
      return paragraphs.map((paragraph) => (paragraph === '' ? '' : translated[next++]!));
    },
  };
}
