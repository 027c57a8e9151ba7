import type { Config } from '../config';
import { createBuiltinAnalyst } from './builtin-analyst';
import { createOpenAiCompatibleChat } from './openai-compatible';
import type { ChatProvider } from './provider';

type ChatConfig = Pick<Config, 'CHAT_PROVIDER' | 'CHAT_BASE_URL' | 'CHAT_MODEL' | 'CHAT_API_KEY' | 'CHAT_TIMEOUT_MS'>;

/** The chat provider CHAT_PROVIDER names (the config already requires CHAT_BASE_URL and CHAT_MODEL for a model). */
export function chatProviderFromConfig(config: ChatConfig): ChatProvider {
  if (config.CHAT_PROVIDER === 'builtin-analyst') return createBuiltinAnalyst();
  return createOpenAiCompatibleChat({
    baseUrl: config.CHAT_BASE_URL!,
    model: config.CHAT_MODEL!,
    apiKey: config.CHAT_API_KEY,
    timeoutMs: config.CHAT_TIMEOUT_MS,
  });
}
