import { ProviderFailure } from '../provider-failure';

/** Speaks a text with one of its voices and hands back an MP3. Real speech services plug in behind this interface. */
export interface SpeechSynthesizer {
  /** The provider of the voices it speaks (a voice's `provider`). */
  readonly name: string;
  /**
   * What decides its output besides the voice and the text (program versions): part of the preview cache key,
   * so that an upgraded synthesiser never serves an old file. Read once; a failure is not remembered.
   */
  version(): Promise<string>;
  /** An MP3 of `text` spoken by the provider's voice `engineVoice`. Throws SpeechSynthesisError. */
  synthesize(engineVoice: string, text: string): Promise<Buffer>;
}

/** The synthesiser failed (`upstreamStatus`: 503 it cannot be run, 500 it ran and failed, 504 too slow). */
export class SpeechSynthesisError extends ProviderFailure {}
