import { execFile } from 'node:child_process';

export interface SoxOptions {
  /** The sox program: a name on PATH or a path (SOX_PATH). */
  soxPath: string;
  /** One run of sox must be done within this (AUDIO_DECODE_TIMEOUT_MS); then it is killed. */
  timeoutMs: number;
}

/** sox could not be run at all (unavailable), failed on its input, or took too long (timeout). */
export class SoxError extends Error {
  constructor(
    message: string,
    readonly kind: 'unavailable' | 'failed' | 'timeout',
  ) {
    super(message);
  }
}

/** sox's stderr, run without a shell (arguments as an array), killed at the timeout. */
export function runSox(options: SoxOptions, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      options.soxPath,
      args,
      { timeout: options.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 1024 * 1024, encoding: 'utf8' },
      (error, _stdout, stderr) => {
        if (!error) return resolve(stderr);
        const failure = error as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null };
        if (failure.killed || failure.signal === 'SIGKILL')
          reject(new SoxError(`sox stopped after ${options.timeoutMs} ms`, 'timeout'));
        else if (failure.code === 'ENOENT' || failure.code === 'EACCES')
          reject(new SoxError(`sox cannot be run: ${failure.code}`, 'unavailable'));
        else reject(new SoxError(`sox failed: ${stderr.trim().split('\n')[0]?.slice(0, 200) ?? ''}`, 'failed'));
      },
    );
  });
}

const versions = new Map<string, Promise<string>>();
/** `sox --version`'s line: part of what a platform file is made by, hence of its content key. */
export function soxVersion(options: SoxOptions): Promise<string> {
  let version = versions.get(options.soxPath);
  if (!version) {
    version = new Promise<string>((resolve, reject) =>
      execFile(options.soxPath, ['--version'], { timeout: options.timeoutMs }, (error, stdout) =>
        error ? reject(new SoxError(`sox cannot be run: ${error.message}`, 'unavailable')) : resolve(stdout.trim()),
      ),
    );
    // A failure is not remembered: sox may be installed by the next call.
    version.catch(() => versions.delete(options.soxPath));
    versions.set(options.soxPath, version);
  }
  return version;
}

export interface DecodedAudio {
  /** How long the audio plays, as sox decodes it to the end (not a header's estimate). */
  durationSecs: number;
  samples: number;
}

/**
 * Decodes the whole file with sox (format `type`, never guessed from a name) and measures it. Decoding
 * stops a little past `maxSecs` (trim), so a long file costs no more than that; a duration over it means
 * "too long", not its exact length.
 */
export async function decodeAudio(
  options: SoxOptions,
  file: string,
  type: string,
  maxSecs: number,
): Promise<DecodedAudio> {
  const report = await runSox(options, ['-V1', '-t', type, file, '-n', 'trim', '0', String(maxSecs + 1), 'stat']);
  const number = (label: string) => Number(new RegExp(`^${label}:\\s*([0-9.]+)`, 'm').exec(report)?.[1] ?? NaN);
  const durationSecs = number('Length \\(seconds\\)');
  const samples = number('Samples read');
  if (!Number.isFinite(durationSecs) || !Number.isFinite(samples))
    throw new SoxError('sox reported no length', 'failed');
  return { durationSecs: Math.round(durationSecs * 1000) / 1000, samples };
}
