import type { Transcript } from '../calls/transcript';
import { saysOptOut } from '../conversation/intents';

/**
 * The call intelligence's opt-out rule (docs/features/call-intelligence.md#the-opt-out-rule): the first of the lead's
 * turns that asks not to be called again, read by the dialogue rules' opt-out phrases in every language they know
 * (lib/conversation/intents.ts saysOptOut). It catches what no engine acted on during the call: a model that did not
 * call opt_out, a transcript the carrier made. Linear in the transcript (docs/hostile-input.md).
 */
export function optOutHeard(transcript: Transcript): { evidence: string } | null {
  const turn = transcript.find((candidate) => candidate.speaker === 'lead' && saysOptOut(candidate.text));
  return turn ? { evidence: turn.text } : null;
}
