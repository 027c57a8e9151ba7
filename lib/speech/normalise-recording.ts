import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { ErrorCode } from '../error-codes';
import { runSox, SoxError, type SoxOptions } from '../background-audio/sox';
import { NORMALISED_AUDIO, SPEECH_LIMITS, type SpeechLimits } from './limits';
import { SpeechFailure } from './speech-failure';

export interface NormaliseOptions {
  sox: SoxOptions;
  limits?: SpeechLimits;
  /**
   * sox's name of the input format (`wav`, `mp3`, `ogg`, `flac`, ...). Without it sox picks the format from
   * the file's name and, failing that, its first bytes.
   */
  type?: string;
}

export interface NormalisedRecording {
  /** The 16 kHz mono 16-bit signed PCM WAV written. */
  wavPath: string;
  /** The decoded audio's length, from the samples written. */
  durationMs: number;
  /** The input file's size. */
  bytes: number;
}

/** The samples of a WAV file, as `sox --i -s` reads them from its header. */
function countSamples(sox: SoxOptions, wavPath: string): Promise<number> {
  return new Promise((resolve, reject) =>
    execFile(sox.soxPath, ['--i', '-s', wavPath], { timeout: sox.timeoutMs, encoding: 'utf8' }, (error, stdout) => {
      const samples = Number(stdout.trim());
      if (error || !Number.isInteger(samples)) reject(new SoxError(`sox --i could not read ${wavPath}`, 'failed'));
      else resolve(samples);
    }),
  );
}

/**
 * Decodes any input sox can decode to the recogniser's audio (16 kHz, mono: channels averaged, 16-bit signed
 * PCM WAV, no dither so the same input gives the same bytes) and measures it. Refusals are SpeechFailures:
 * a file over `maxBytes` (recording_too_large, before decoding), a file sox cannot decode or that decodes to
 * no samples (recording_not_audio), audio over `maxSecs` (recording_too_long; decoding stops one second past
 * the limit). sox missing or killed is a SoxError, not a refusal.
 */
export async function normaliseRecording(
  inputPath: string,
  wavPath: string,
  options: NormaliseOptions,
): Promise<NormalisedRecording> {
  const limits = options.limits ?? SPEECH_LIMITS;
  const { size: bytes } = await stat(inputPath);
  if (bytes > limits.maxBytes)
    throw new SpeechFailure(ErrorCode.recording_too_large, `the recording is ${bytes} bytes, over ${limits.maxBytes}`, {
      bytes,
      maxBytes: limits.maxBytes,
    });
  const input = options.type ? ['-t', options.type, inputPath] : [inputPath];
  const output = ['-t', 'wav', '-r', String(NORMALISED_AUDIO.sampleRate), '-c', String(NORMALISED_AUDIO.channels)];
  output.push('-b', String(NORMALISED_AUDIO.bitsPerSample), '-e', 'signed-integer', wavPath);
  try {
    await runSox(options.sox, ['-V1', '-D', ...input, ...output, 'trim', '0', String(limits.maxSecs + 1)]);
  } catch (error) {
    if (!(error instanceof SoxError) || error.kind === 'unavailable') throw error;
    throw new SpeechFailure(
      ErrorCode.recording_not_audio,
      error.kind === 'timeout'
        ? `the recording did not decode within ${options.sox.timeoutMs} ms`
        : 'the file does not decode as audio',
      { cause: error.message },
    );
  }
  const samples = await countSamples(options.sox, wavPath);
  if (samples === 0) throw new SpeechFailure(ErrorCode.recording_not_audio, 'the file decodes to no audio', {});
  const durationMs = Math.round((samples * 1000) / NORMALISED_AUDIO.sampleRate);
  if (durationMs > limits.maxSecs * 1000)
    throw new SpeechFailure(ErrorCode.recording_too_long, `the recording is over ${limits.maxSecs} s long`, {
      maxSecs: limits.maxSecs,
    });
  return { wavPath, durationMs, bytes };
}
