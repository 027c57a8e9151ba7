import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runSox, type SoxOptions } from './sox';
import type { AudioFormat } from './uploads';

/**
 * Where an agent's background audio is played on a call (docs/features/background-audio.md#on-a-call), per carrier:
 * - `played`: on Telnyx, Call Control's playback_start loops it under the call from the moment the conversation
 *   starts to the hang-up (overlay, loop infinity);
 * - `not_supported`: on Twilio, whose ConversationRelay speaks its own text-to-speech and whose `play` message (and
 *   TwiML's `<Play>`) plays audio in turn with the speech, never under it: the call is placed without it.
 */
export const BACKGROUND_AUDIO_PLAYBACK = {
  telnyx: 'played',
  twilio: 'not_supported',
} as const satisfies Record<string, 'played' | 'not_supported'>;

export type BackgroundAudioPlayback = typeof BACKGROUND_AUDIO_PLAYBACK;

/** The agent's `backgroundAudioPlayback`: null when it has no background audio (silence: nothing to play). */
export function backgroundAudioPlaybackOf(backgroundAudioId: string | null): BackgroundAudioPlayback | null {
  return backgroundAudioId === null ? null : BACKGROUND_AUDIO_PLAYBACK;
}

/** The formats Telnyx plays from a URL (PlayAudioUrlRequest: "either a WAV or MP3 file"), by media type. */
const TELNYX_AUDIO_TYPES: Record<string, 'mp3' | 'wav'> = { 'audio/mpeg': 'mp3', 'audio/wav': 'wav' };

/** Telnyx's audio_type of the audio a call will be sent: MP3 and WAV as stored; Ogg and FLAC sent as WAV. */
export const telnyxAudioTypeOf = (mediaType: string): 'mp3' | 'wav' => TELNYX_AUDIO_TYPES[mediaType] ?? 'wav';

/**
 * The audio as a carrier that plays only MP3 and WAV can take it: MP3 and WAV as they are; an Ogg Vorbis or FLAC
 * upload decoded by sox to a 16-bit WAV at its own rate and channels (from a temporary folder, removed after; killed
 * at the sox timeout). An upload is at most 600 s (lib/background-audio/uploads.ts), so the WAV is bounded too.
 */
export async function carrierPlayableAudio(
  sox: SoxOptions,
  audio: { mediaType: string; bytes: Uint8Array },
): Promise<{ mediaType: 'audio/mpeg' | 'audio/wav'; bytes: Uint8Array }> {
  if (audio.mediaType === 'audio/mpeg' || audio.mediaType === 'audio/wav')
    return { mediaType: audio.mediaType, bytes: audio.bytes };
  const soxType: AudioFormat['soxType'] = audio.mediaType === 'audio/flac' ? 'flac' : 'ogg';
  const dir = await mkdtemp(path.join(os.tmpdir(), 'background-audio-wav-'));
  try {
    const input = path.join(dir, `upload.${soxType}`);
    const output = path.join(dir, 'upload.wav');
    await writeFile(input, audio.bytes);
    await runSox(sox, ['-V1', '-t', soxType, input, '-t', 'wav', '-b', '16', '-e', 'signed-integer', output]);
    return { mediaType: 'audio/wav', bytes: new Uint8Array(await readFile(output)) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
