import type { ConversationEngine } from '../lib/conversation/conversation-engine';
import type { DialogueConfig } from '../lib/conversation/create-engine';
import type { Client, Connection } from '@temporalio/client';
import type { Database } from '../lib/database';
import type { SqlPool } from '../lib/sql-pool';
import type { BackgroundAudioTools } from '../lib/background-audio/platform-files';
import type { SoxOptions } from '../lib/background-audio/sox';
import type { WhatsAppProvider } from '../lib/whatsapp/provider';
import type { ChatProvider } from '../lib/chat/provider';
import type { Translator } from '../lib/translations/translator';
import type { LeadDispatcher } from '../lib/temporal/lead-dispatch';
import type { StartQueue } from '../lib/temporal/start-queue';
import type { VoicePreviews } from '../lib/voices/previews';
import type { Keyring } from '../lib/secrets/keyring';
import type { WebhookRateLimits } from './door/webhook-door';
import type { CodecServerOptions } from './codec/codec-routes';
import type { SimulatorsSetting } from '../lib/simulators';
import type { Egress } from '../lib/http/egress';
import type { CalendarEndpoints } from '../lib/calendar/calendar-connection';

/** What handlers reach: the database and Temporal. Built once per process in api/main.ts. */
export interface AppServices {
  db: Database;
  /** Plain SQL for the door (authentication and rate limit) of every request. */
  sql: SqlPool;
  temporal: Client;
  temporalConnection: Connection;
  taskQueue: string;
  /** Starts the workflows of stored leads (the outbox of lead intake). */
  leadDispatcher: LeadDispatcher;
  /** Other durable work started after its request was answered (a store's webhook), each covered by a sweep. */
  startsAfterAnswer: StartQueue;
  /** Requests per rolling minute per key where the workspace sets no limit of its own. */
  defaultRateLimitPerMinute: number;
  /** Requests a minute per address and per connection to the signed public webhooks; unset: the defaults (api/door/webhook-door.ts). */
  webhookRateLimits?: WebhookRateLimits;
  /**
   * Calls exports: the volume shared with the export workers (EXPORT_DIR), the most rows answered inline
   * (EXPORT_INLINE_MAX_ROWS), how long a finished file is kept (EXPORT_RETENTION_HOURS, in seconds
   * here), the rows per keyset page an export job reads, and the export workers' task queue
   * (EXPORT_TASK_QUEUE), where a job's workflow sends its activities. Without `taskQueue` they go to
   * defaultExportTaskQueue(taskQueue), as the config resolves an unset EXPORT_TASK_QUEUE.
   */
  exports: { dir: string; inlineMaxRows: number; retentionSeconds: number; pageRows: number; taskQueue?: string };
  /** Voice previews (GET /voices/{id}/preview); unset: built from the environment (defaultVoicePreviews). */
  voicePreviews?: VoicePreviews;
  /** The Temporal payload codec server under /codec (TEMPORAL_CODEC_TOKEN); unset: no codec routes. */
  codecServer?: CodecServerOptions;
  /** sox and the platform's background audio files; unset: from the environment (BACKGROUND_AUDIO_DIR, SOX_PATH). */
  backgroundAudio?: BackgroundAudioTools;
  /**
   * The secret each carrier signs its status events with, by provider name (POST /telephony/{provider}/events);
   * a provider without one has every event refused. Never logged.
   */
  telephonySigningSecrets?: Readonly<Record<string, string>>;
  /**
   * The key ring every connection's secrets are sealed with (SECRETS_KEYS): a Twilio callback is checked with its
   * connection's auth token, a store's webhook with its connection's signing secret, each opened for the check only.
   * Unset: every Twilio callback, and every store webhook of a connection whose secret is sealed, is refused.
   */
  carrierKeyring?: Keyring;
  /**
   * The one way out for URLs tenant data can touch (lib/http/egress.ts): a call's custom functions
   * (docs/features/functions.md). Unset: the production guard, without allowances.
   */
  egress?: Egress;
  /** Where the calendar twins listen (GOOGLE_CALENDAR_TWIN_URL, CALCOM_TWIN_URL; docs/features/calendar.md#the-twins). */
  calendarEndpoints?: CalendarEndpoints;
  /**
   * The API's address as carriers reach it (PUBLIC_BASE_URL): a Twilio signature covers the URL Twilio called, which
   * behind a proxy is not the one this process sees. Unset: every Twilio callback is refused.
   */
  publicBaseUrl?: string;
  /**
   * How long a question of the script walk on Telnyx waits for its answer before the walk goes on with "(no answer)"
   * (api/carriers/telnyx-question-waits.ts); unset: Twilio's Gather timeout, ANSWER_TIMEOUT_SECONDS. Tests on a
   * time-scaled twin shorten it.
   */
  telnyxAnswerTimeoutMs?: number;
  /**
   * How an answered Twilio or Telnyx call's agent talks (CONVERSATION_ENGINE, lib/conversation/conversation-engine.ts):
   * relay (unset), ConversationRelay to the call's socket (api/carriers/relay-socket.ts); gather, the script walk for
   * every agent. An agent may ask for gather alone (its conversationEngine).
   */
  conversationEngine?: ConversationEngine;
  /**
   * Which dialogue engine holds a ConversationRelay conversation (DIALOGUE_*, lib/conversation/create-engine.ts): unset, the
   * script engine for every agent.
   */
  dialogue?: DialogueConfig;
  /**
   * How long a conversation waits for the lead after the agent's words would have been said before the agent speaks
   * again (RELAY_SILENCE_TIMEOUT_MS; unset: ANSWER_TIMEOUT_SECONDS): docs/features/conversation/relay.md#silence.
   */
  relaySilenceMs?: number;
  /**
   * A billed minute's length when a test call's time-up line is timed by the minutes its hold covers (the relay
   * socket's, api/carriers/relay-socket.ts TIME_UP_LEAD_MS; the script walk's, api/carriers/script-calls.ts
   * paidTimeLeftMs): 60 s; tests shorten it to their carrier twin's time scale.
   */
  testMinuteMs?: number;
  /**
   * SIMULATORS (docs/configuration.md#simulators): disabled, a caller number bound to no carrier connection and a
   * WhatsApp sender bound to no Meta connection are refused at the request that would use them; enabled or billed,
   * the simulated carrier and WhatsApp provider stand in for them (free when enabled).
   */
  simulators: SimulatorsSetting;
  /** The carrier the workers dial through (FALLBACK_CARRIER, for a number bound to no connection): a test call is recorded for it. Unset: simulated. */
  telephonyProvider?: string;
  /**
   * Recording analyses (POST /speech/calls): the speech workers' task queue (SPEECH_TASK_QUEUE; unset:
   * defaultSpeechTaskQueue(taskQueue)) and sox, which measures an upload (unset: SOX_PATH).
   */
  speech?: { taskQueue?: string; sox?: SoxOptions };
  /**
   * WhatsApp (docs/features/whatsapp.md): the provider senders and templates go through (unset: the simulated
   * one at SIMULATED_WHATSAPP_URL), the app secret its webhooks are signed with and the verify token of its
   * subscription check (unset: every webhook refused). Secrets never logged.
   */
  whatsapp?: { provider?: WhatsAppProvider; appSecret?: string; verifyToken?: string };
  /** The translator of transcripts (POST /calls/{id}/transcript-translation); unset: apertium as the environment names it. */
  translator?: Translator;
  /** Who answers POST /campaigns/{id}/chat/stream (CHAT_PROVIDER); unset: the builtin-analyst. */
  chat?: ChatProvider;
}
