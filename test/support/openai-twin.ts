// The OpenAI twin in the test process, and a dialogue context that keeps what an engine stores in memory
// (docs/features/conversation/model-engine.md).
import { afterAll } from 'vitest';
import type { ScriptCall } from '../../lib/conversation/script-walk';
import type { DialogueConfig } from '../../lib/conversation/create-engine';
import type { ConversationTurn, DialogueContext, KnowledgePassage } from '../../lib/conversation/engine';
import type { DialogueToolCall, DialogueToolResult } from '../../lib/conversation/tools';
import { OPENAI_TWIN_API_KEY } from '../../simulators/openai-twin/config';
import { createOpenAiTwin, type OpenAiTwin } from '../../simulators/openai-twin/server';

export { OPENAI_TWIN_API_KEY };

/** A twin on a free loopback port for the file's tests, closed after them. */
export async function startOpenAiTwin(): Promise<{ twin: OpenAiTwin; baseURL: string }> {
  const twin = createOpenAiTwin({ apiKeys: [OPENAI_TWIN_API_KEY] });
  const baseURL = await twin.listen(0);
  afterAll(() => twin.close());
  return { twin, baseURL };
}

/** An API's dialogue settings (startTestApi's `dialogue`): agents with instructions talk through the twin at baseURL. */
export const twinDialogue = (baseURL: string): DialogueConfig => ({
  DIALOGUE_PROVIDER: 'openai-compatible',
  DIALOGUE_BASE_URL: baseURL,
  DIALOGUE_MODEL: 'twin-model',
  DIALOGUE_API_KEY: OPENAI_TWIN_API_KEY,
  DIALOGUE_TIMEOUT_MS: 10_000,
});

export const agentCall = (overrides: Partial<NonNullable<ScriptCall['agent']>> = {}): ScriptCall => ({
  agent: {
    language: 'en-US',
    voiceId: 'voice_1',
    script: { openingLine: 'Hi {{name}}!', questions: ['Is this a good time?'], closing: 'Thanks, bye.' },
    hints: ['Acme Solar', 'kWh'],
    ...overrides,
  },
  lead: { name: 'Ada', fields: { city: 'Lyon', plan: 'basic' } },
});

export interface RecordingContext extends DialogueContext {
  turns: ConversationTurn[];
  trims: Array<{ step: number; part: number; text: string }>;
  toolCalls: DialogueToolCall[];
  knowledgeQueries: string[];
}

/**
 * A context over memory: turns stored once per step and part (as the database does), trims applied to them, every
 * tool call noted and answered by `tools` (default: done, and end_call, opt_out, schedule_callback and
 * transfer_to_human end the conversation), knowledge by `knowledge`.
 */
export function recordingContext(
  options: {
    call?: ScriptCall;
    instructions?: string | null;
    firstMessage?: string | null;
    knowledge?: (query: string) => readonly KnowledgePassage[];
    tools?: (call: DialogueToolCall) => DialogueToolResult;
  } = {},
): RecordingContext {
  const context: RecordingContext = {
    call: options.call ?? agentCall(),
    instructions: options.instructions === undefined ? 'You sell solar panels for Acme Solar.' : options.instructions,
    firstMessage: options.firstMessage ?? null,
    turns: [],
    trims: [],
    toolCalls: [],
    knowledgeQueries: [],
    tools: {
      run(call) {
        context.toolCalls.push(call);
        return Promise.resolve(
          options.tools?.(call) ?? { ok: true, result: `${call.name} done.`, endsConversation: true },
        );
      },
    },
    knowledge(query) {
      context.knowledgeQueries.push(query);
      return Promise.resolve(options.knowledge?.(query) ?? []);
    },
    record(turns) {
      for (const turn of turns)
        if (!context.turns.some((stored) => stored.step === turn.step && stored.part === turn.part))
          context.turns.push(structuredClone(turn));
      return Promise.resolve();
    },
    trim(step, part, text) {
      context.trims.push({ step, part, text });
      const turn = context.turns.find((stored) => stored.step === step && stored.part === part);
      if (turn) turn.text = text;
      return Promise.resolve();
    },
  };
  return context;
}

/** Every token of an async iterable. */
export async function collect(tokens: AsyncIterable<string>): Promise<string[]> {
  const all: string[] = [];
  for await (const token of tokens) all.push(token);
  return all;
}
