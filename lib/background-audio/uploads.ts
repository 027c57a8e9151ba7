import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BASE64_IN_JSON_BODY } from '../base64-body-limits';
import { decodeAudio, SoxError, type SoxOptions } from './sox';

/** Limits of an upload, whose audio comes in base64 in a JSON body (lib/base64-body-limits.ts). */
export const UPLOAD_LIMITS = {
  ...BASE64_IN_JSON_BODY,
  /** Shorter is a click, not a background. */
  minSecs: 0.5,
  /** Longer is not a loop; decoding stops just past it, so a file that claims hours costs no more. */
  maxSecs: 600,
  /** Uploads a workspace holds at once (at most about 36 MB of audio). */
  perWorkspace: 50,
} as const;

export interface AudioFormat {
  /** sox's name of the format: the file is decoded as this and nothing else. */
  soxType: 'wav' | 'mp3' | 'ogg' | 'flac';
  mediaType: 'audio/wav' | 'audio/mpeg' | 'audio/ogg' | 'audio/flac';
}

const ascii = (bytes: Uint8Array, start: number, end: number) =>
  Buffer.from(bytes.subarray(start, end)).toString('latin1');

/** The format the file's first bytes announce (not its name, not what the caller says); null: none we take. */
export function detectAudioFormat(bytes: Uint8Array): AudioFormat | null {
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WAVE')
    return { soxType: 'wav', mediaType: 'audio/wav' };
  if (ascii(bytes, 0, 4) === 'fLaC') return { soxType: 'flac', mediaType: 'audio/flac' };
  if (ascii(bytes, 0, 4) === 'OggS') return { soxType: 'ogg', mediaType: 'audio/ogg' };
  // An ID3 tag, or straight into an MPEG audio frame (11 bits of sync).
  if (ascii(bytes, 0, 3) === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0))
    return { soxType: 'mp3', mediaType: 'audio/mpeg' };
  return null;
}

/** Why an upload is not audio we keep, in words for the caller. */
export class AudioRefused extends Error {}

export interface MeasuredUpload extends AudioFormat {
  durationSecs: number;
}

/**
 * Proves the upload is audio by decoding all of it with sox (from a temporary file, removed after) and
 * measures how long it plays. Anything sox cannot decode, or that decodes to too little or too much, is
 * refused with AudioRefused; only sox missing altogether is an error of ours.
 */
export async function measureUpload(sox: SoxOptions, bytes: Uint8Array): Promise<MeasuredUpload> {
  const format = detectAudioFormat(bytes);
  if (!format) throw new AudioRefused('not audio: expected a WAV, MP3, Ogg Vorbis or FLAC file');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'background-audio-'));
  try {
    const file = path.join(dir, `upload.${format.soxType}`);
    await writeFile(file, bytes);
    const decoded = await decodeAudio(sox, file, format.soxType, UPLOAD_LIMITS.maxSecs).catch((error: unknown) => {
      if (!(error instanceof SoxError) || error.kind === 'unavailable') throw error;
      throw new AudioRefused(
        error.kind === 'timeout'
          ? `not audio: decoding took over ${sox.timeoutMs} ms`
          : `not audio: the file does not decode as ${format.mediaType}`,
      );
    });
    if (decoded.samples === 0 || decoded.durationSecs < UPLOAD_LIMITS.minSecs)
      throw new AudioRefused(`too short: at least ${UPLOAD_LIMITS.minSecs} s of audio is needed`);
    if (decoded.durationSecs > UPLOAD_LIMITS.maxSecs)
      throw new AudioRefused(`too long: at most ${UPLOAD_LIMITS.maxSecs} s of audio is kept`);
    return { ...format, durationSecs: decoded.durationSecs };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
