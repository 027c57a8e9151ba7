import type { ScriptCall, ScriptTurn } from './script-walk';
import type { DialogueTools } from './tools';

/**
 * What runs a call's dialogue (docs/features/conversation/relay.md#the-dialogue-engine): the carrier turns speech into
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
  onInterrupt(heardUntil: string): void | Promise<void>;
  /**
   * The lead said nothing after the agent's last words (docs/features/conversation/relay.md#silence): what the agent
   * says then. An engine without it leaves silences alone.
   */
  onSilence?(): AsyncIterable<string>;
  /** The engine has said its last words: the transport ends the conversation after them. */
  readonly ended: boolean;
}

/** A passage of the agent's knowledge documents found for what the lead said. */
export interface KnowledgePassage {
  documentId: string;
  title: string;
  text: string;
}

/**
 * A transcript turn as an engine stores it: the script walk's turns (step, part, speaker, text), and a tool's use,
 * speaker `tool`, its text the tool's name, with its arguments and result.
 */
export type ConversationTurn =
  | ScriptTurn
  | {
      step: number;
      part: number;
      speaker: 'tool';
      text: string;
      confidence: null;
      tool: { name: string; arguments: Record<string, unknown>; result: string; ok: boolean };
    };

/** What an engine is given for one conversation. */
export interface DialogueContext {
  /** The agent (null: a call without one) and the lead, as the script walk reads them. */
  call: ScriptCall;
  /** The agent's instructions for a model (its prompt); null: none. */
  instructions: string | null;
  /** What the agent says first, after the welcome greeting and any disclosure; null: the engine's own start. */
  firstMessage: string | null;
  /** The call's tools. */
  tools: DialogueTools;
  /** The best passages of the agent's knowledge documents for a text (empty: none, or the agent has no documents). */
  knowledge(query: string): Promise<readonly KnowledgePassage[]>;
  /** Stores turns once per call, step and part (a repeated store adds nothing). */
  record(turns: readonly ConversationTurn[]): Promise<unknown>;
  /** Replaces the text of a stored agent turn (an interrupted answer: what the lead heard of it). */
  trim(step: number, part: number, text: string): Promise<unknown>;
}

/** A text as speech tokens: its words, each with the space after it, as a model would stream them. */
export function tokensOf(text: string): string[] {
  return text.split(/(?<=\s)/).filter((token) => token !== '');
}
