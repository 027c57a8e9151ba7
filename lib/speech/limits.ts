/**
 * What one recording may be for speech analysis (docs/features/speech.md). Size is checked on the file
 * before anything decodes it; length is the decoded audio's, and decoding stops just past `maxSecs`, so a
 * file whose header claims hours costs no more than that.
 */
export interface SpeechLimits {
  /** The largest file accepted, in bytes, whatever its format. */
  maxBytes: number;
  /** The longest audio accepted, in seconds of decoded sound. */
  maxSecs: number;
}

export const SPEECH_LIMITS: SpeechLimits = {
  /** 20 MiB: about 20 minutes of 128 kbit/s MP3, or 10 minutes of 16 kHz 16-bit stereo WAV. */
  maxBytes: 20 * 1024 * 1024,
  /** 20 minutes: a long sales call. pocketsphinx needs roughly half the audio's length in CPU time. */
  maxSecs: 1200,
};

/** The audio the recogniser reads: what normaliseRecording writes. */
export const NORMALISED_AUDIO = { sampleRate: 16_000, channels: 1, bitsPerSample: 16 } as const;

/** One sox run of speech analysis (decoding a recording of up to maxBytes) that takes longer is killed. */
export const SPEECH_DECODE_TIMEOUT_MS = 60_000;
