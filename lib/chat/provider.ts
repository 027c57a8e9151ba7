import type { CampaignFactSource } from './campaign-facts';

/** One message of a campaign's conversation, as a chat model reads it. */
export interface ChatTurn {
  role: 'user' | 'assistant';
  content: string;
}

/** A question about one campaign: its facts, the conversation before it, and what stops the work. */
export interface ChatQuestion {
  question: string;
  /** The conversation so far, oldest first (the question itself not included). */
  history: readonly ChatTurn[];
  /** The campaign's figures, computed by the service's SQL when a provider asks for them. */
  facts: CampaignFactSource;
  /** Aborted when the client disconnects: the provider stops and produces nothing more. */
  signal: AbortSignal;
}

/**
 * Who answers questions about a campaign: the embedded builtin-analyst, or a chat model behind an
 * OpenAI-compatible endpoint. An answer is produced as text fragments, each handed on as soon as it exists.
 */
export interface ChatProvider {
  /** builtin-analyst or openai-compatible: stored with each answer. */
  readonly name: string;
  answer(question: ChatQuestion): AsyncIterable<string>;
}

/** The provider could not answer (the model's endpoint refused or failed): told to the client as an error event. */
export class ChatProviderError extends Error {
  constructor(
    message: string,
    /** The endpoint's HTTP status, when it answered one. */
    readonly upstreamStatus?: number,
  ) {
    super(message);
  }
}
