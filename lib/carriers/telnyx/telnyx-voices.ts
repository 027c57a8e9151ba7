/**
 * The agent's voice (lib/voices/voices.ts) as Telnyx's `speak` `voice` (docs/features/carriers.md#voices-on-telnyx):
 * Amazon Polly's neural voices as Telnyx names them, `AWS.Polly.<VoiceId>-Neural` (the same Polly voices the Twilio
 * adapter says with, so an agent sounds alike on both carriers), with the voice's own language.
 */
export const TELNYX_SPEAK_VOICES: Readonly<Record<string, { voice: string; language: string }>> = {
  'espeak-ng/en-us': { voice: 'AWS.Polly.Joanna-Neural', language: 'en-US' },
  'espeak-ng/en-gb': { voice: 'AWS.Polly.Amy-Neural', language: 'en-GB' },
  'espeak-ng/es': { voice: 'AWS.Polly.Lucia-Neural', language: 'es-ES' },
  'espeak-ng/de': { voice: 'AWS.Polly.Vicki-Neural', language: 'de-DE' },
  'espeak-ng/fr Amélie': { voice: 'AWS.Polly.Lea-Neural', language: 'fr-FR' },
  'simulated/studio': { voice: 'AWS.Polly.Joanna-Neural', language: 'en-US' },
};

/** Telnyx's voice when the table does not know the agent's: its default female voice, in the agent's language. */
export const TELNYX_DEFAULT_VOICE = 'female';

/** The speak parameters for an agent: its voice's mapping, or Telnyx's default voice in the agent's language. */
export function telnyxSpeakVoiceOf(voiceId: string, agentLanguage: string): { voice: string; language: string } {
  return TELNYX_SPEAK_VOICES[voiceId] ?? { voice: TELNYX_DEFAULT_VOICE, language: agentLanguage };
}
