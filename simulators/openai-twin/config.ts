import { z } from 'zod';
import { jsonSetting, twinSettingsOrExit } from '../twin-common/config';

/**
 * The key the development stack gives the model engine for the OpenAI twin (docs/features/conversation/model-engine.md). Fake by
 * design and public: the twin accepts it, OpenAI never would.
 */
export const OPENAI_TWIN_API_KEY = 'sk-openai-twin-not-a-real-secret';

/** The model name the development stack sends the twin (which answers any): its rules, not a model of OpenAI's. */
export const OPENAI_TWIN_MODEL = 'openai-twin-rules';

/** The OpenAI twin's settings (docs/features/conversation/model-engine.md#running-the-openai-twin). */
export const openAiTwinConfigSchema = z.object({
  OPENAI_TWIN_PORT: z.coerce.number().int().min(0).max(65535).default(3500),
  OPENAI_TWIN_HOST: z.string().default('127.0.0.1'),
  /** JSON: the keys it accepts, ["sk-..."]; default: OPENAI_TWIN_API_KEY alone. */
  OPENAI_TWIN_API_KEYS: jsonSetting(z.array(z.string().min(1)).min(1), () => [OPENAI_TWIN_API_KEY]),
  /** Milliseconds before the first chunk of every completion (the latency bench); 0: none. */
  OPENAI_TWIN_FIRST_TOKEN_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  /** Milliseconds between streamed chunks; 0: none. */
  OPENAI_TWIN_CHUNK_MS: z.coerce.number().int().min(0).max(60_000).default(0),
});
export type OpenAiTwinConfig = z.infer<typeof openAiTwinConfigSchema>;

/** The settings from the environment, or a line per fault (never a value: keys are secrets) and exit 78. */
export function loadOpenAiTwinConfigOrExit(env: NodeJS.ProcessEnv = process.env): OpenAiTwinConfig {
  return twinSettingsOrExit(openAiTwinConfigSchema, env);
}
