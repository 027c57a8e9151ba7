/**
 * What runs a call's dialogue (docs/features/conversation-relay.md#the-dialogue-engine): the carrier turns speech into
 * text and back (ConversationRelay), an engine decides the words. One engine per conversation; the transport
 * (api/carriers/relay-socket.ts) calls it in order and never twice at once.
 */
export interface DialogueEngine {
  /**
   * The conversation is open (the carrier's setup): what the agent says first after the carrier's welcome greeting
   * (empty: nothing; the engine waits for the lead).
   */
  start(): Promise<string>;
  /** What the lead said (a complete utterance): the agent's answer, token by token, as it comes. */
  onPrompt(text: string): AsyncIterable<string>;
  /** The lead spoke over the agent, who had said `heardUntil` of its last answer. */
  onInterrupt(heardUntil: string): void;
  /** The engine has said its last words: the transport ends the conversation after them. */
  readonly ended: boolean;
}

/** A text as speech tokens: its words, each with the space after it, as a model would stream them. */
export function tokensOf(text: string): string[] {
  return text.split(/(?<=\s)/).filter((token) => token !== '');
}
