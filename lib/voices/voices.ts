/**
 * The voices every workspace may use: a fixed catalogue, the same for all workspaces (no workspace has
 * voices of its own yet). An id is `<provider>/<voice>`, so it stays stable whatever else a provider adds;
 * ids hold `/`, spaces and non-ASCII letters and must be URL-encoded in a path.
 */
export interface Voice {
  id: string;
  name: string;
  /** BCP 47 language tag of what the voice speaks. */
  language: string;
  /** Who speaks it: `espeak-ng` (the embedded synthesiser, with previews) or `simulated` (no preview). */
  provider: 'espeak-ng' | 'simulated';
}

export interface CatalogueVoice extends Voice {
  /** The provider's own name of the voice (espeak-ng: `-v` language+variant); null: the provider offers no preview. */
  engineVoice: string | null;
}

export const VOICES: readonly CatalogueVoice[] = [
  { id: 'espeak-ng/en-us', name: 'American English', language: 'en-US', provider: 'espeak-ng', engineVoice: 'en-us' },
  { id: 'espeak-ng/en-gb', name: 'British English', language: 'en-GB', provider: 'espeak-ng', engineVoice: 'en-gb' },
  { id: 'espeak-ng/es', name: 'Spanish', language: 'es-ES', provider: 'espeak-ng', engineVoice: 'es' },
  { id: 'espeak-ng/de', name: 'German', language: 'de-DE', provider: 'espeak-ng', engineVoice: 'de' },
  // espeak-ng's French with its female variant f2.
  { id: 'espeak-ng/fr Amélie', name: 'Amélie', language: 'fr-FR', provider: 'espeak-ng', engineVoice: 'fr-fr+f2' },
  // The calls of the simulated telephony provider "speak" with it: there is no audio to preview.
  { id: 'simulated/studio', name: 'Studio (simulated)', language: 'en-US', provider: 'simulated', engineVoice: null },
];

/** The fixed sentence a preview says, in the voice's language (its primary subtag). */
export const PREVIEW_SENTENCES: Readonly<Record<string, string>> = {
  en: 'Hello, I am calling to confirm your order. Is this a good time to talk?',
  es: 'Hola, le llamo para confirmar su pedido. ¿Es un buen momento para hablar?',
  de: 'Hallo, ich rufe an, um Ihre Bestellung zu bestätigen. Passt es Ihnen gerade?',
  fr: 'Bonjour, je vous appelle pour confirmer votre commande. Est-ce un bon moment pour parler ?',
};

export const previewSentenceOf = (voice: Voice): string =>
  PREVIEW_SENTENCES[voice.language.split('-')[0]!] ?? PREVIEW_SENTENCES.en!;

export const findVoice = (id: string): CatalogueVoice | undefined => VOICES.find((voice) => voice.id === id);

/** A BCP 47 tag's language (its primary subtag, lower case): `en` of `en-GB`. */
const primaryLanguage = (tag: string) => tag.split('-')[0]!.toLowerCase();

/**
 * Whether a voice speaks a language (docs/features/agents.md#voice-and-language): the same language, whatever the
 * region, so an en-US agent may speak with the British voice, and a French agent may not speak with an English one.
 */
export const voiceSpeaks = (voice: Voice, language: string): boolean =>
  primaryLanguage(voice.language) === primaryLanguage(language);
