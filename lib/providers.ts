// The one place a provider port (lib/<feature>/: Carrier, WhatsAppSender, WhatsAppProvider, ChatProvider,
// Translator, SpeechSynthesizer, CallIntelligenceModel) is bound to its implementation as the config names it. The API's and the
// workers' entry points (api/main.ts, worker/main.ts) build their providers here and hand them down. A dialogue engine
// is made per conversation, from its context and the DIALOGUE_* settings: lib/conversation/create-engine.ts.
import type { Config } from './config';
import type { CallIntelligenceModel } from './call-intelligence/extraction';
import { createModelIntelligence } from './call-intelligence/model-intelligence';
import { createBuiltinAnalyst } from './chat/builtin-analyst';
import { createOpenAiCompatibleChat } from './chat/openai-compatible';
import { historyWindowOf } from './openai-client';
import type { ChatProvider } from './chat/provider';
import { createApertiumTranslator } from './translations/apertium-translator';
import type { Translator } from './translations/translator';
import { createEspeakNgSynthesizer } from './voices/espeak-ng-speech';
import { createPollySynthesizer } from './voices/polly-speech';
import type { SpeechSynthesizer } from './voices/speech';
import type { Database } from './database';
import { createSimulatedCarrierClient } from './simulated-carrier/client';
import type { Carrier } from './calls/carrier';
import { createConnectionCarrier } from './carriers/connection-carrier';
import { createUnboundCarrier } from './carriers/unbound-carrier';
import { createSimulatedWhatsApp } from './whatsapp/simulated-whatsapp';
import type { WhatsAppSender } from './whatsapp/sender';
import type { WhatsAppProvider } from './whatsapp/provider';
import { createSimulatedWhatsAppClient } from './whatsapp/graph-client';
import { createConnectionWhatsAppProvider } from './whatsapp/connection-provider';
import { createUnboundWhatsAppProvider, createUnboundWhatsAppSender } from './whatsapp/unbound-provider';

/**
 * The carrier calls are placed through: a call whose caller number is bound to a carrier connection goes through
 * that account's adapter (lib/carriers/connection-carrier.ts: Twilio, Telnyx, or their twins); any other call through
 * the simulated carrier's REST API (npm run simulated-carrier) when SIMULATORS allows, else it is refused
 * (lib/carriers/unbound-carrier.ts).
 */
export function createCarrier(
  config: Pick<
    Config,
    'SIMULATORS' | 'FALLBACK_CARRIER' | 'SIMULATED_CARRIER_URL' | 'SECRETS_KEYS' | 'PUBLIC_BASE_URL'
  >,
  db: Database,
): Carrier {
  return createConnectionCarrier({
    db,
    keyring: config.SECRETS_KEYS,
    fallback: fallbackCarrier(config),
    publicBaseUrl: config.PUBLIC_BASE_URL,
  });
}

/** What places a call from a number bound to no connection: the simulated carrier when SIMULATORS allows, else nothing. */
function fallbackCarrier(config: Pick<Config, 'SIMULATORS' | 'FALLBACK_CARRIER' | 'SIMULATED_CARRIER_URL'>): Carrier {
  if (config.SIMULATORS === 'disabled') return createUnboundCarrier();
  switch (config.FALLBACK_CARRIER) {
    case 'simulated':
      return createSimulatedCarrierClient({ baseUrl: config.SIMULATED_CARRIER_URL });
  }
}

/** The embedded sender of old journey runs (lib/whatsapp/simulated-whatsapp.ts), where SIMULATORS allows it. */
export function createWhatsAppSender(
  config: Pick<Config, 'SIMULATORS' | 'FALLBACK_WHATSAPP_PROVIDER'>,
  db: Database,
): WhatsAppSender {
  if (config.SIMULATORS === 'disabled') return createUnboundWhatsAppSender();
  switch (config.FALLBACK_WHATSAPP_PROVIDER) {
    case 'simulated':
      return createSimulatedWhatsApp(db);
  }
}

/**
 * The WhatsApp Business provider senders, templates and messages go through: a sender bound to a Meta connection
 * (meta, meta-twin) through its Graph client and token; any other through the simulated one's Graph-API-shaped HTTP
 * API (npm run simulated-whatsapp) when SIMULATORS allows, else refused (lib/whatsapp/unbound-provider.ts).
 */
export function createWhatsAppProvider(
  config: Pick<Config, 'SIMULATORS' | 'FALLBACK_WHATSAPP_PROVIDER' | 'SIMULATED_WHATSAPP_URL' | 'SECRETS_KEYS'>,
  db?: Database,
): WhatsAppProvider {
  const fallback = fallbackWhatsAppProvider(config);
  return db ? createConnectionWhatsAppProvider({ db, keyring: config.SECRETS_KEYS, fallback }) : fallback;
}

function fallbackWhatsAppProvider(
  config: Pick<Config, 'SIMULATORS' | 'FALLBACK_WHATSAPP_PROVIDER' | 'SIMULATED_WHATSAPP_URL'>,
): WhatsAppProvider {
  if (config.SIMULATORS === 'disabled') return createUnboundWhatsAppProvider();
  switch (config.FALLBACK_WHATSAPP_PROVIDER) {
    case 'simulated':
      return createSimulatedWhatsAppClient({ baseUrl: config.SIMULATED_WHATSAPP_URL });
  }
}

type ChatConfig = Pick<Config, 'CHAT_PROVIDER' | 'CHAT_BASE_URL' | 'CHAT_MODEL' | 'CHAT_API_KEY' | 'CHAT_TIMEOUT_MS'> &
  Partial<Pick<Config, 'MODEL_MAX_TOKENS_CHAT' | 'MODEL_HISTORY_MESSAGES' | 'MODEL_HISTORY_CHARS'>>;

/** The chat provider CHAT_PROVIDER names (the config already requires CHAT_BASE_URL and CHAT_MODEL for a model). */
export function chatProviderFromConfig(config: ChatConfig): ChatProvider {
  if (config.CHAT_PROVIDER === 'builtin-analyst') return createBuiltinAnalyst();
  return createOpenAiCompatibleChat({
    baseUrl: config.CHAT_BASE_URL!,
    model: config.CHAT_MODEL!,
    apiKey: config.CHAT_API_KEY,
    timeoutMs: config.CHAT_TIMEOUT_MS,
    maxTokens: config.MODEL_MAX_TOKENS_CHAT,
    history: historyWindowOf(config),
  });
}

type IntelligenceConfig = Pick<
  Config,
  | 'INTELLIGENCE_PROVIDER'
  | 'INTELLIGENCE_BASE_URL'
  | 'INTELLIGENCE_MODEL'
  | 'INTELLIGENCE_API_KEY'
  | 'INTELLIGENCE_TIMEOUT_MS'
> &
  Partial<Pick<Config, 'MODEL_MAX_TOKENS_INTELLIGENCE'>>;

/**
 * The model call intelligence asks (docs/features/call-intelligence.md#by-a-model), or undefined for rule-based (the
 * embedded rules alone). The config already requires INTELLIGENCE_BASE_URL and INTELLIGENCE_MODEL for a model.
 */
export function callIntelligenceModelFromConfig(config: IntelligenceConfig): CallIntelligenceModel | undefined {
  if (config.INTELLIGENCE_PROVIDER === 'rule-based') return undefined;
  return createModelIntelligence({
    name: config.INTELLIGENCE_PROVIDER,
    baseURL: config.INTELLIGENCE_BASE_URL!,
    model: config.INTELLIGENCE_MODEL!,
    apiKey: config.INTELLIGENCE_API_KEY,
    timeoutMs: config.INTELLIGENCE_TIMEOUT_MS,
    maxTokens: config.MODEL_MAX_TOKENS_INTELLIGENCE,
  });
}

/** The embedded translator of a process: Debian's apertium as the config names it. */
export function translatorFromConfig(config: Pick<Config, 'APERTIUM_BIN' | 'TRANSLATION_TIMEOUT_MS'>): Translator {
  return createApertiumTranslator({ apertiumPath: config.APERTIUM_BIN, timeoutMs: config.TRANSLATION_TIMEOUT_MS });
}

/**
 * The speech synthesizer voice previews are made with, as VOICE_PREVIEW_SYNTHESIZER names it: espeak-ng (and lame), or
 * Amazon Polly (amazon-polly, or polly-twin through the twin) with the deployment's credentials. One, never a fallback.
 */
export function previewSynthesizerFromConfig(
  config: Pick<
    Config,
    | 'ESPEAK_NG_PATH'
    | 'LAME_PATH'
    | 'SPEECH_TIMEOUT_MS'
    | 'VOICE_PREVIEW_SYNTHESIZER'
    | 'POLLY_REGION'
    | 'POLLY_ENDPOINT'
    | 'POLLY_ACCESS_KEY_ID'
    | 'POLLY_SECRET_ACCESS_KEY'
  >,
): SpeechSynthesizer {
  switch (config.VOICE_PREVIEW_SYNTHESIZER) {
    case 'espeak-ng':
      return createEspeakNgSynthesizer({
        espeakPath: config.ESPEAK_NG_PATH,
        lamePath: config.LAME_PATH,
        timeoutMs: config.SPEECH_TIMEOUT_MS,
      });
    case 'amazon-polly':
    case 'polly-twin':
      return createPollySynthesizer({
        name: config.VOICE_PREVIEW_SYNTHESIZER,
        region: config.POLLY_REGION,
        endpoint: config.POLLY_ENDPOINT,
        credentials:
          config.POLLY_ACCESS_KEY_ID && config.POLLY_SECRET_ACCESS_KEY
            ? { accessKeyId: config.POLLY_ACCESS_KEY_ID, secretAccessKey: config.POLLY_SECRET_ACCESS_KEY }
            : undefined,
        timeoutMs: config.SPEECH_TIMEOUT_MS,
      });
  }
}
