import { spawn } from 'node:child_process';
import { ErrorCode } from '../error-codes';
import { parsePocketsphinxWords } from './pocketsphinx-output';
import { debianPackageVersion, findDebianPocketsphinxModel, type PocketsphinxModel } from './pocketsphinx-model';
import { SpeechFailure } from './speech-failure';
import type { TranscribeOptions, Transcriber, Transcription } from './transcriber';

export interface PocketsphinxOptions {
  /** The recogniser's CLI: a name on PATH or a path. */
  program?: string;
  /** The model files; by default Debian's pocketsphinx-en-us as its package lists them, else the CLI's built-in paths. */
  model?: PocketsphinxModel;
  /** A run that takes longer is killed (SIGKILL) and fails. */
  timeoutMs?: number;
  /** Called with the recogniser's process id once it runs (the bench samples its memory). */
  onSpawn?: (pid: number) => void;
}

/** A run of the recogniser that failed (not a refusal of the recording): worth a retry. */
export class PocketsphinxError extends Error {}

/** The languages of the embedded model (BCP 47, compared case-insensitively): the API refuses others at upload. */
export const POCKETSPHINX_LANGUAGES = ['en-US', 'en'] as const;
const STDERR_KEPT = 4096;

/**
 * The embedded recogniser: Debian's pocketsphinx (CMU Sphinx, 0.8+5prealpha) with its US English model,
 * run offline as a child process (`pocketsphinx_continuous -infile WAV -time yes`), one process per
 * recording, no shell. It reads the 16 kHz mono WAV normaliseRecording writes.
 */
export class PocketsphinxTranscriber implements Transcriber {
  readonly name = 'pocketsphinx';
  readonly languages = POCKETSPHINX_LANGUAGES;
  private readonly program: string;
  private readonly timeoutMs: number;
  private setup: Promise<{ model: PocketsphinxModel | null; engine: string }> | undefined;

  constructor(private readonly options: PocketsphinxOptions = {}) {
    this.program = options.program ?? 'pocketsphinx_continuous';
    this.timeoutMs = options.timeoutMs ?? 30 * 60_000;
  }

  private resolveSetup() {
    this.setup ??= (async () => {
      const model = this.options.model ?? (await findDebianPocketsphinxModel());
      const version = await debianPackageVersion('pocketsphinx');
      const engine = [this.name, version, model?.version ? `(${model.version})` : null].filter(Boolean).join(' ');
      return { model, engine };
    })();
    return this.setup;
  }

  async transcribe(wavPath: string, options: TranscribeOptions): Promise<Transcription> {
    if (!this.languages.some((tag) => tag.toLowerCase() === options.language.toLowerCase()))
      throw new SpeechFailure(
        ErrorCode.speech_language_unsupported,
        `pocketsphinx has no model for ${options.language}`,
        { language: options.language, supported: [...this.languages] },
      );
    const { model, engine } = await this.resolveSetup();
    const args = ['-infile', wavPath, '-time', 'yes'];
    if (model) args.push('-hmm', model.hmm, '-lm', model.lm, '-dict', model.dict);
    const stdout = await this.run(args, options.signal);
    const words = parsePocketsphinxWords(stdout);
    return { text: words.map(({ word }) => word).join(' '), words, engine };
  }

  private run(args: string[], signal: AbortSignal | undefined): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.program, args, { stdio: ['ignore', 'pipe', 'pipe'], signal, killSignal: 'SIGKILL' });
      const stdout: Buffer[] = [];
      let stderr = '';
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, this.timeoutMs);
      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
      // Its log (configuration, model loading, per-utterance statistics) goes to stderr: the tail says why it failed.
      child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT)));
      child.once('spawn', () => child.pid !== undefined && this.options.onSpawn?.(child.pid));
      child.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(
          error.name === 'AbortError'
            ? error
            : new PocketsphinxError(`${this.program} cannot be run: ${error.code ?? error.message}`),
        );
      });
      child.once('close', (code, killedBy) => {
        clearTimeout(timer);
        if (code === 0) return resolve(Buffer.concat(stdout).toString('utf8'));
        const why = timedOut ? `stopped after ${this.timeoutMs} ms` : `exited with ${code ?? killedBy}`;
        const lastError =
          stderr
            .split('\n')
            .filter((line) => /ERROR|FATAL/.test(line))
            .pop() ?? '';
        reject(new PocketsphinxError(`${this.program} ${why}: ${lastError.slice(0, 300)}`));
      });
    });
  }
}
