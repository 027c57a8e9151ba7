import type { PreviewSynthesizerName } from './speech';

export interface PreviewFile {
  /** Absolute path of the MP3 in the cache. */
  path: string;
  size: number;
  /** Who made it (the X-Preview-Synthesizer header). */
  synthesizer: PreviewSynthesizerName;
}

/** Voice previews: synthesised once per content, then served from files that outlive the process. */
export interface VoicePreviews {
  /** The voice's preview file; refuses voice_not_found, preview_not_supported, provider_error. */
  fileOf(voiceId: string): Promise<PreviewFile>;
}
