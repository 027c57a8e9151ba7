/**
 * Where an agent's background audio is played on a call (docs/features/background-audio.md#on-a-call), per carrier:
 * nowhere today, and the agent's readiness says so rather than pretending.
 * - Telnyx: Call Control's playback_start mixes a file on top of another file only ("A customer cannot Play Audio
 *   with `overlay=true` unless there is a Play Audio with `overlay=false` actively playing"), and ConversationRelay's
 *   speech and `speak` are not files; its documented background audio belongs to its AI Assistants, which the product
 *   does not run.
 * - Twilio: ConversationRelay speaks its own text-to-speech, and its `play` (like TwiML's `<Play>`) plays in turn with
 *   the speech, never under it; mixing would take bidirectional Media Streams, another engine.
 */
export const BACKGROUND_AUDIO_PLAYBACK = {
  telnyx: 'not_supported',
  twilio: 'not_supported',
} as const satisfies Record<string, 'not_supported'>;

export type BackgroundAudioPlayback = typeof BACKGROUND_AUDIO_PLAYBACK;

/** The agent's `backgroundAudioPlayback`: null when it has no background audio (silence: nothing to play). */
export function backgroundAudioPlaybackOf(backgroundAudioId: string | null): BackgroundAudioPlayback | null {
  return backgroundAudioId === null ? null : BACKGROUND_AUDIO_PLAYBACK;
}
