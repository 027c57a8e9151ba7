import type { DialogueContext, DialogueEngine } from './engine';
import { historyWindowOf } from '../openai-client';
import { createModelEngine } from './model-engine';
import { createScriptEngine } from './script-engine';

/**
 * The settings of the dialogue engines (lib/config.ts parses them: DIALOGUE_*, MODEL_*), written out here so the
 * engines do not import the schema of every setting.
 */
export interface DialogueConfig {
  DIALOGUE_PROVIDER: 'script' | 'openai-compatible' | 'openai-twin';
  DIALOGUE_BASE_URL?: string;
  DIALOGUE_MODEL?: string;
  DIALOGUE_API_KEY?: string;
  DIALOGUE_TIMEOUT_MS: number;
  // The model bounds: a config always has them; a caller built without one gets MODEL_BOUNDS_DEFAULTS.
  MODEL_MAX_TOKENS_DIALOGUE?: number;
  MODEL_HISTORY_MESSAGES?: number;
  MODEL_HISTORY_CHARS?: number;
  MODEL_MAX_TOOL_ROUNDS?: number;
}

/**
 * Which engine a conversation gets: the model's when DIALOGUE_PROVIDER names a model (openai-compatible, or
 * openai-twin) and the agent has instructions.
 */
export function dialogueEngineKind(
  context: Pick<DialogueContext, 'instructions'>,
  config: Pick<DialogueConfig, 'DIALOGUE_PROVIDER'>,
): 'model' | 'script' {
  return config.DIALOGUE_PROVIDER !== 'script' && !!context.instructions?.trim() ? 'model' : 'script';
}

/**
 * The dialogue engine of one conversation, as the config names it (docs/features/conversation/model-engine.md#choosing-the-engine):
 * the model engine for an agent with instructions when DIALOGUE_PROVIDER is openai-compatible or openai-twin (the
 * config already requires DIALOGUE_BASE_URL and DIALOGUE_MODEL then); otherwise the script engine, which has no use
 * for the context's tools, knowledge or instructions.
 */
export function createDialogueEngine(context: DialogueContext, config: DialogueConfig): DialogueEngine {
  if (config.DIALOGUE_PROVIDER !== 'script' && dialogueEngineKind(context, config) === 'model')
    return createModelEngine(context, {
      provider: config.DIALOGUE_PROVIDER,
      baseURL: config.DIALOGUE_BASE_URL!,
      model: config.DIALOGUE_MODEL!,
      apiKey: config.DIALOGUE_API_KEY,
      timeoutMs: config.DIALOGUE_TIMEOUT_MS,
      maxTokens: config.MODEL_MAX_TOKENS_DIALOGUE,
      maxToolRounds: config.MODEL_MAX_TOOL_ROUNDS,
      history: historyWindowOf(config),
    });
  return createScriptEngine(context);
}

/** The engine of a conversation of this installation: as DIALOGUE_* say when the API was given them, else the script engine. */
export const configuredDialogueEngine = (
  context: DialogueContext,
  config: DialogueConfig | undefined,
): DialogueEngine => (config ? createDialogueEngine(context, config) : createScriptEngine(context));
