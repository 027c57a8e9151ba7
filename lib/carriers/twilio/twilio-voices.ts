import { carrierVoices, POLLY_VOICES } from '../polly-voices';

/**
 * The agent's voice (lib/voices/voices.ts) as Twilio's <Say voice="..." language="...">
 * (docs/features/carriers/twilio.md#voices-on-twilio). Twilio speaks with Amazon Polly and Google voices named `Polly.<Name>`
 * and `Google.<locale>-<model>-<letter>`; a voice speaks its own language, and Twilio refuses a voice with a language
 * it does not speak, so `language` is the voice's, not the agent's (the Gather listens in the agent's).
 */
export const TWILIO_SAY_VOICES = carrierVoices((voice) => `Polly.${voice.standard}`);

/**
 * The <Say> attributes for an agent: its voice's mapping; a voice id the table does not know (a voice added to the
 * catalogue later, a row written before the catalogue) gets no voice attribute, so Twilio's default voice speaks in the
 * agent's language.
 */
export function twilioSayVoiceOf(voiceId: string, agentLanguage: string): { voice?: string; language: string } {
  return TWILIO_SAY_VOICES[voiceId] ?? { language: agentLanguage };
}

/**
 * The agent's voice on ConversationRelay (docs/features/conversation/relay.md#voices): `ttsProvider="Amazon"` and the
 * Polly neural voice ConversationRelay names `<Name>-Neural`, in the voice's language, so that an agent sounds as it
 * does in <Say> and on Telnyx. An unknown voice gets no attributes: ConversationRelay's default voice of the language.
 */
export function twilioRelayVoiceOf(voiceId: string): { ttsProvider?: string; voice?: string } {
  const voice = POLLY_VOICES[voiceId];
  return voice ? { ttsProvider: 'Amazon', voice: `${voice.neural}-Neural` } : {};
}
