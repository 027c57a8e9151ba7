/** One recognised word and when it was said, in milliseconds from the start of the recording. */
export interface TranscribedWord {
  word: string;
  startMs: number;
  /** Exclusive: the end of the word's last frame. */
  endMs: number;
}

export interface Transcription {
  /** The recognised words in order, separated by single spaces (fillers and silences left out). */
  text: string;
  words: TranscribedWord[];
  /** Which recogniser made it, with its version and model when known (e.g. "pocketsphinx 0.8+5prealpha+1-15 ..."). */
  engine: string;
}

export interface TranscribeOptions {
  /** BCP 47 tag of the language spoken (for example `en-US`). */
  language: string;
  /** Aborting stops the recogniser. */
  signal?: AbortSignal;
}

/**
 * Speech to text with word timings. The embedded default is pocketsphinx (lib/speech/pocketsphinx.ts); a
 * cloud recogniser replaces it by implementing this: it reads a 16 kHz mono 16-bit WAV (normaliseRecording)
 * and refuses a language it has no model for with a SpeechFailure `speech_language_unsupported`.
 */
export interface Transcriber {
  /** The engine's short name, as transcriptions begin their `engine` with it. */
  readonly name: string;
  /** The BCP 47 tags it takes (compared case-insensitively). */
  readonly languages: readonly string[];
  transcribe(wavPath: string, options: TranscribeOptions): Promise<Transcription>;
}
