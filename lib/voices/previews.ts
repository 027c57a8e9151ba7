export interface PreviewFile {
  /** Absolute path of the MP3 in the cache. */
  path: string;
  size: number;
}

/** Voice previews: synthesised once per content, then served from files that outlive the process. */
export interface VoicePreviews {
  /** The voice's preview file; ApiError 404 voice_not_found, 501 preview_not_supported, 502 provider_error. */
  fileOf(voiceId: string): Promise<PreviewFile>;
}
