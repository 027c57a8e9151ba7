/**
 * The catalogue's voices (lib/voices/voices.ts) as Amazon Polly voices, which both carriers speak with
 * (docs/features/carriers/twilio.md#voices-on-twilio): `standard`, the name Twilio's <Say> takes (`Polly.<Name>`); `neural`,
 * its neural voice (Telnyx's `AWS.Polly.<Name>-Neural`, ConversationRelay's Amazon `<Name>-Neural`): the same voice,
 * except French, whose Céline has no neural voice (Léa). Each speaks its own language.
 */
export const POLLY_VOICES: Readonly<Record<string, { standard: string; neural: string; language: string }>> = {
  'espeak-ng/en-us': { standard: 'Joanna', neural: 'Joanna', language: 'en-US' },
  'espeak-ng/en-gb': { standard: 'Amy', neural: 'Amy', language: 'en-GB' },
  'espeak-ng/es': { standard: 'Lucia', neural: 'Lucia', language: 'es-ES' },
  'espeak-ng/de': { standard: 'Vicki', neural: 'Vicki', language: 'de-DE' },
  'espeak-ng/fr Amélie': { standard: 'Celine', neural: 'Lea', language: 'fr-FR' },
  'simulated/studio': { standard: 'Joanna', neural: 'Joanna', language: 'en-US' },
};

/** A table of carrier voices made from POLLY_VOICES by `name`. */
export const carrierVoices = (
  name: (voice: (typeof POLLY_VOICES)[string]) => string,
): Readonly<Record<string, { voice: string; language: string }>> =>
  Object.fromEntries(
    Object.entries(POLLY_VOICES).map(([voiceId, voice]) => [voiceId, { voice: name(voice), language: voice.language }]),
  );
