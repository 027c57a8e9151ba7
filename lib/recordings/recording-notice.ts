import { ruleLanguageOf, type RuleLanguage } from '../conversation/utterance';

/**
 * The carriers (connection providers) the product records calls on (docs/features/recordings.md): only their calls say
 * the recording notice, so that the notice is said exactly when the call is recorded.
 */
export const RECORDING_PROVIDERS: readonly string[] = ['twilio', 'twilio-twin', 'telnyx', 'telnyx-twin'];

/** Whether a call of this provider is recorded while its workspace records calls. */
export const recordsCallsOn = (provider: string): boolean => RECORDING_PROVIDERS.includes(provider);

/**
 * The sentence that tells the person the call is recorded (docs/features/recordings.md#the-recording-notice), in the
 * languages the dialogue rules read; any other language: English. Said after the workspace's disclosure, as part of
 * it, on every call answered while the workspace records calls.
 */
export const RECORDING_NOTICES: Record<RuleLanguage, string> = {
  en: 'This call is being recorded.',
  es: 'Esta llamada está siendo grabada.',
};

/**
 * The disclosure a call says first (docs/features/compliance.md#disclosure): the workspace's own, then, when the
 * workspace records calls, the recording notice in the agent's language; the notice alone when there is no disclosure.
 * Null: nothing to say.
 */
export function spokenDisclosure(
  disclosure: string | null,
  recording: boolean,
  agentLanguage: string | null | undefined,
): string | null {
  const own = disclosure?.trim() || null;
  if (!recording) return own;
  const notice = RECORDING_NOTICES[ruleLanguageOf(agentLanguage ?? 'en')];
  return own ? `${own} ${notice}` : notice;
}
