import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SoxOptions } from '../background-audio/sox';
import { detectAudioFormat, type AudioFormat } from '../background-audio/uploads';
import { ErrorCode } from '../error-codes';
import type { SpeechLimits } from './limits';
import { normaliseRecording } from './normalise-recording';
import { SpeechFailure } from './speech-failure';

export interface MeasuredRecording extends AudioFormat {
  /** The decoded audio's length. */
  durationMs: number;
}

/**
 * An uploaded recording, checked before anything is recorded or billed: its first bytes name a format
 * taken (WAV, MP3, Ogg Vorbis, FLAC), and all of it decodes, within the limits, as that format
 * (normaliseRecording, into a temporary folder removed after). Refusals are SpeechFailures; sox missing
 * is an error of ours.
 */
export async function measureRecordingUpload(
  bytes: Uint8Array,
  options: { sox: SoxOptions; limits: SpeechLimits },
): Promise<MeasuredRecording> {
  const format = detectAudioFormat(bytes);
  if (!format)
    throw new SpeechFailure(
      ErrorCode.recording_not_audio,
      'the file is not audio: expected a WAV, MP3, Ogg Vorbis or FLAC file',
      {},
    );
  const dir = await mkdtemp(path.join(os.tmpdir(), 'speech-upload-'));
  try {
    const file = path.join(dir, `upload.${format.soxType}`);
    await writeFile(file, bytes);
    const { durationMs } = await normaliseRecording(file, path.join(dir, 'normalised.wav'), {
      sox: options.sox,
      limits: options.limits,
      type: format.soxType,
    });
    return { ...format, durationMs };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
