import { carrierVoices } from '../polly-voices';

/**
 * The agent's voice (lib/voices/voices.ts) as Telnyx's `speak` `voice` (docs/features/carriers/telnyx.md#voices-on-telnyx):
 * Amazon Polly's neural voices as Telnyx names them, `AWS.Polly.<VoiceId>-Neural` (the same Polly voices the Twilio
 * adapter says with, so an agent sounds alike on both carriers), with the voice's own language.
 */
export const TELNYX_SPEAK_VOICES = carrierVoices((voice) => `AWS.Polly.${voice.neural}-Neural`);

/** Telnyx's voice when the table does not know the agent's: its default female voice, in the agent's language. */
export const TELNYX_DEFAULT_VOICE = 'female';

/** The speak parameters for an agent: its voice's mapping, or Telnyx's default voice in the agent's language. */
export function telnyxSpeakVoiceOf(voiceId: string, agentLanguage: string): { voice: string; language: string } {
  return TELNYX_SPEAK_VOICES[voiceId] ?? { voice: TELNYX_DEFAULT_VOICE, language: agentLanguage };
}
