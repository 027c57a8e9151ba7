/**
 * The agent's voice (lib/voices/voices.ts) as Twilio's <Say voice="..." language="...">
 * (docs/features/carriers.md#voices-on-twilio). Twilio speaks with Amazon Polly and Google voices named `Polly.<Name>`
 * and `Google.<locale>-<model>-<letter>`; a voice speaks its own language, and Twilio refuses a voice with a language
 * it does not speak, so `language` is the voice's, not the agent's (the Gather listens in the agent's).
 */
export const TWILIO_SAY_VOICES: Readonly<Record<string, { voice: string; language: string }>> = {
  'espeak-ng/en-us': { voice: 'Polly.Joanna', language: 'en-US' },
  'espeak-ng/en-gb': { voice: 'Polly.Amy', language: 'en-GB' },
  'espeak-ng/es': { voice: 'Polly.Lucia', language: 'es-ES' },
  'espeak-ng/de': { voice: 'Polly.Vicki', language: 'de-DE' },
  'espeak-ng/fr Amélie': { voice: 'Polly.Celine', language: 'fr-FR' },
  'simulated/studio': { voice: 'Polly.Joanna', language: 'en-US' },
};

/**
 * The <Say> attributes for an agent: its voice's mapping; a voice id the table does not know (a voice added to the
 * catalogue later, a row written before the catalogue) gets no voice attribute, so Twilio's default voice speaks in the
 * agent's language.
 */
export function twilioSayVoiceOf(voiceId: string, agentLanguage: string): { voice?: string; language: string } {
  return TWILIO_SAY_VOICES[voiceId] ?? { language: agentLanguage };
}
