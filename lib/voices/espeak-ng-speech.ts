import { spawn } from 'node:child_process';
import { SpeechSynthesisError, type SpeechSynthesizer } from './speech';

export interface EspeakNgOptions {
  /** The espeak-ng and lame programs: names on PATH or paths (ESPEAK_NG_PATH, LAME_PATH). */
  espeakPath: string;
  lamePath: string;
  /** Both programs together must be done within this (SPEECH_TIMEOUT_MS). */
  timeoutMs: number;
}

/** lame's variable bit rate quality 6: about 11 KB for a 2-second sentence of speech, plenty for a voice. */
const LAME_QUALITY = '6';

/** What one program wrote to stdout, or a SpeechSynthesisError; spawned without a shell, arguments as an array. */
function run(program: string, args: readonly string[], timeoutMs: number, input?: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(new SpeechSynthesisError(503, `${program} cannot be run: ${error.code ?? error.message}`)),
    );
    child.on('close', (code, signal) => {
      if (signal) reject(new SpeechSynthesisError(504, `${program} stopped by ${signal} (over ${timeoutMs} ms)`));
      else if (code !== 0)
        reject(new SpeechSynthesisError(500, `${program} exited ${code}: ${stderr.trim().slice(0, 200)}`));
      else resolve(Buffer.concat(stdout));
    });
    // A program that exits without reading its input closes the pipe: that is its exit status's story, not ours.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/**
 * Debian's espeak-ng speaks (WAV on stdout), lame encodes it to MP3. Run one after the other on buffers: a
 * preview is a sentence (tens of KB), and each program's failure is then told apart.
 */
export function createEspeakNgSynthesizer(options: EspeakNgOptions): SpeechSynthesizer {
  let version: Promise<string> | undefined;
  const readVersion = async () => {
    const [espeak, lame] = await Promise.all([
      run(options.espeakPath, ['--version'], options.timeoutMs),
      run(options.lamePath, ['--version'], options.timeoutMs),
    ]);
    // The data path espeak-ng prints is where it is installed, not what it says: left out.
    return `${espeak.toString().split(' Data at:')[0]!.trim()} | ${lame.toString().split('\n')[0]!.trim()}`;
  };
  return {
    name: 'espeak-ng',
    engineVoiceOf: (voice) => (voice.provider === 'espeak-ng' ? voice.engineVoice : null),
    version() {
      version ??= readVersion().catch((error: unknown) => {
        version = undefined;
        throw error;
      });
      return version;
    },
    async synthesize(engineVoice, text) {
      const started = Date.now();
      // `--` ends the options: a text is never read as one.
      const wav = await run(options.espeakPath, ['-v', engineVoice, '--stdout', '--', text], options.timeoutMs);
      const remaining = Math.max(1, options.timeoutMs - (Date.now() - started));
      return run(options.lamePath, ['--quiet', '-V', LAME_QUALITY, '-', '-'], remaining, wav);
    },
  };
}
