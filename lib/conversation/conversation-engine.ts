/**
 * How an answered Twilio or Telnyx call's agent talks (docs/features/agents.md#conversation-engine), named alike by the
 * deployment (CONVERSATION_ENGINE) and by each agent (its `conversationEngine`):
 * - relay, the default: the dialogue engine (the script engine, or the model when one is configured) over
 *   ConversationRelay's WebSocket (docs/features/conversation/relay.md), the conversation a web test session has;
 * - gather: the script walk on the carrier's own speech recognition (docs/features/carriers/twilio.md#the-script-walk),
 *   a questionnaire kept as a fallback.
 */
export const CONVERSATION_ENGINES = ['relay', 'gather'] as const;
export type ConversationEngine = (typeof CONVERSATION_ENGINES)[number];

/**
 * The engine of one call: the gather walk when the deployment or the agent asks for it (either is a fallback: a
 * deployment that cannot hold WebSockets, an agent kept on its questionnaire), else the dialogue engine.
 */
export function callConversationEngine(
  deployment: ConversationEngine | undefined,
  agent: { conversationEngine?: ConversationEngine | null } | null,
): ConversationEngine {
  return deployment === 'gather' || agent?.conversationEngine === 'gather' ? 'gather' : 'relay';
}
