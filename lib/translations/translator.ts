import type { TranslationPair } from './translation-languages';
import { ProviderFailure } from '../provider-failure';

export type { TranslationPair };

/** A pair as the translator has it installed, with the name a translation made by it is stored under. */
export interface InstalledPair extends TranslationPair {
  /** What made a translation: program and data versions, e.g. `apertium 3.8.3 eng-spa (apertium-eng-spa 0.8.1-2)`. */
  provider: string;
}

/** Translates texts between languages. Embedded default: Debian's apertium; a hosted service plugs in here. */
export interface Translator {
  readonly name: string;
  /** The pairs installed now, read from the translator's own data (never a fixed list). Throws TranslationError. */
  pairs(): Promise<InstalledPair[]>;
  /**
   * `texts` translated one for one, in order, along one of `pairs()`. Throws TranslationError.
   * Callers pick the pair (choosePair, lib/translations/translation-languages.ts), so `pair` is always one the translator listed.
   */
  translate(texts: readonly string[], pair: TranslationPair): Promise<string[]>;
}

/** The translator failed (`upstreamStatus`: 503 it cannot be run, 500 it ran and failed, 504 too slow). */
export class TranslationError extends ProviderFailure {}
