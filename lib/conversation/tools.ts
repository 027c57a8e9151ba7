/**
 * The tools an agent can use during a call (docs/features/conversation/tools.md): the same four for every engine (the
 * script engine calls them by its rules, a model by its tool calls), run by the conversation's transport against the
 * call, its lead and its workspace, and each recorded in the transcript with its arguments and result.
 */
export const DIALOGUE_TOOL_NAMES = ['end_call', 'transfer_to_human', 'schedule_callback', 'opt_out'] as const;
export type DialogueToolName = (typeof DIALOGUE_TOOL_NAMES)[number];

/** A tool the engine asks for: its name and its arguments (a model's, parsed from its JSON). */
export interface DialogueToolCall {
  name: DialogueToolName;
  arguments: Record<string, unknown>;
}

/** What running a tool gave. */
export interface DialogueToolResult {
  /** The tool did what it was asked (false: refused or failed; `result` says why). */
  ok: boolean;
  /** What the model is told (a tool message's content), and what the transcript records as the result. */
  result: string;
  /**
   * The conversation ends once the agent's current words are said: end_call, opt_out and schedule_callback after
   * their goodbye, transfer_to_human as the call is handed to the human.
   */
  endsConversation: boolean;
  /** What the tool decided, for an engine's own words: schedule_callback's `callbackAt` (ISO 8601) and `localTime`. */
  data?: Record<string, string>;
}

/** Runs the tools of one conversation; given to its engine by the transport. */
export interface DialogueTools {
  run(call: DialogueToolCall): Promise<DialogueToolResult>;
  /** The agent's custom functions (docs/features/functions.md), offered beside the four; absent: none. */
  functions?: FunctionTools;
}

/** A custom function as a model is offered it, with what the agent says while it runs. */
export interface OfferedFunction {
  name: string;
  description: string;
  /** JSON Schema of the model's arguments (the presets are not in it: the model never sees them). */
  parameters: Record<string, unknown>;
  /** Said as the request leaves; null: nothing. */
  fillerLine: string | null;
  /** Said when the request has not answered after the engine's wait; null: nothing. */
  slowLine: string | null;
  /** The script engine calls it once the lead has answered this question of the script (1-based); null: never. */
  afterQuestion: number | null;
}

/** The call's custom functions: what is offered, and one call of one (sent at most once per toolCallId). */
export interface FunctionTools {
  offered(): Promise<readonly OfferedFunction[]>;
  run(call: { name: string; toolCallId: string; arguments: unknown }): Promise<{ ok: boolean; result: string }>;
}

/** JSON Schema of a tool's arguments, as chat completions' `tools[].function.parameters` take it. */
interface ToolParameters {
  type: 'object';
  properties: Record<string, { type: 'string'; description: string }>;
  required: string[];
  additionalProperties: false;
}

export interface DialogueToolDefinition {
  name: DialogueToolName;
  description: string;
  parameters: ToolParameters;
}

const noArguments = (): ToolParameters => ({
  type: 'object',
  properties: {},
  required: [],
  additionalProperties: false,
});

/** The four tools as a model is offered them (chat completions `tools`, type function). */
export const DIALOGUE_TOOL_DEFINITIONS: readonly DialogueToolDefinition[] = [
  {
    name: 'end_call',
    description:
      'Hang up. Use it after saying goodbye, when the conversation is over: every question answered, or the lead ' +
      'wants to stop.',
    parameters: {
      type: 'object',
      properties: { reason: { type: 'string', description: 'Why the call ends, in a few words.' } },
      required: [],
      additionalProperties: false,
    },
  },
  {
    name: 'transfer_to_human',
    description:
      'Hand the call to a human colleague, when the lead asks for a person or needs what you cannot give. Say that ' +
      'you are transferring first.',
    parameters: {
      type: 'object',
      properties: {
        summary: {
          type: 'string',
          description: 'One or two sentences for the human: who the lead is and what they want.',
        },
      },
      required: [],
      additionalProperties: false,
    },
  },
  {
    name: 'schedule_callback',
    description:
      'Book a call back at the time the lead asks for. Pass the lead\'s own words for the time (e.g. "tomorrow at ' +
      'three", "next Monday morning"): they are read in the lead\'s time zone. Then confirm the time and say goodbye.',
    parameters: {
      type: 'object',
      properties: {
        when: { type: 'string', description: "The lead's words for when to call back, as they said them." },
      },
      required: ['when'],
      additionalProperties: false,
    },
  },
  {
    name: 'opt_out',
    description:
      'The lead does not want to be contacted again: their number is put on the do-not-call list at once. Apologise, ' +
      'confirm they will not be called again, and say goodbye.',
    parameters: noArguments(),
  },
];

export const isDialogueToolName = (name: string): name is DialogueToolName =>
  (DIALOGUE_TOOL_NAMES as readonly string[]).includes(name);
