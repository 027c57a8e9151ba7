import { ProviderFailure } from '../provider-failure';
import type { CatalogueVoice } from './voices';

/** Who synthesises voice previews (VOICE_PREVIEW_SYNTHESIZER), as each preview's answer names it. */
export type PreviewSynthesizerName = 'espeak-ng' | 'amazon-polly' | 'polly-twin';

/** Speaks a text with one of its voices and hands back an MP3. Real speech services plug in behind this interface. */
export interface SpeechSynthesizer {
  /** What the preview's answer says made it (the X-Preview-Synthesizer header). */
  readonly name: PreviewSynthesizerName;
  /**
   * What decides its output besides the voice and the text (program versions, engine, format): part of the preview
   * cache key, so that an upgraded synthesiser never serves an old file. Read once; a failure is not remembered.
   */
  version(): Promise<string>;
  /** Its own name of a catalogue voice; null: it does not speak that voice (the preview is 501). */
  engineVoiceOf(voice: CatalogueVoice): string | null;
  /** An MP3 of `text` spoken by its voice `engineVoice`. Throws SpeechSynthesisError. */
  synthesize(engineVoice: string, text: string): Promise<Buffer>;
}

/** The synthesiser failed (`upstreamStatus`: 503 it cannot be run or reached, 500 it ran and failed, 504 too slow). */
export class SpeechSynthesisError extends ProviderFailure {}
