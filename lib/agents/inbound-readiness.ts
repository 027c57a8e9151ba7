import { findVoice } from '../voices/voices';
import type { PhoneCapabilities } from '../phone-numbers/phone-numbers';

/** What readiness reads of the agent a number routes to (a row of Agent). */
export interface InboundAgent {
  voiceId: string;
  /** { openingLine, questions, closing } as stored. */
  script: unknown;
  deletedAt: Date | null;
}

/**
 * A number is ready for inbound calls (inboundReady) when all of these hold:
 * - it takes calls (capabilities.voice);
 * - it routes to an agent, and that agent exists and is not deleted;
 * - the agent's voice is in the catalogue (lib/voices/voices.ts), so it can speak;
 * - the agent's script has a non-empty openingLine, so it has something to answer with;
 * - the number's carrier confirmed that it sends the number's calls to the product, through the connection the number
 *   is bound to now (`routed`: lib/phone-numbers/inbound-routing.ts, docs/features/carriers/inbound.md#pointing-the-number).
 * Questions and closing may be empty: an agent that only greets can still answer.
 */
export function isInboundReady(
  capabilities: PhoneCapabilities,
  agent: InboundAgent | null | undefined,
  routed: boolean,
): boolean {
  if (!capabilities.voice || !agent || agent.deletedAt || !routed) return false;
  const openingLine = (agent.script as { openingLine?: unknown } | null)?.openingLine;
  return findVoice(agent.voiceId) !== undefined && typeof openingLine === 'string' && openingLine.trim() !== '';
}
