import type { Client } from '@temporalio/client';
import type { AmbiguousResendRule } from '../lib/whatsapp/ambiguous-resend';
import type { Database } from '../lib/database';
import type { Carrier } from '../lib/calls/carrier';
import type { WhatsAppSender } from '../lib/whatsapp/sender';
import type { WhatsAppProvider } from '../lib/whatsapp/provider';
import type { CarrierBreakerRule } from '../lib/dial-ladder/carrier-breaker';
import type { SubscribableProgressState } from '../lib/calls/call-states';
import type { CallIntelligenceModel } from '../lib/call-intelligence/extraction';
import type { CpuBudget } from '../lib/cpu-budget/cpu-budget';
import type { Keyring } from '../lib/secrets/keyring';
import type { Egress } from '../lib/http/egress';
import type { SimulatorsSetting } from '../lib/simulators';
import type { CalendarEndpoints } from '../lib/calendar/calendar-connection';

/** What the main worker's activities run over: wired by the worker (worker/create-worker.ts), by tests with their own. */
export interface ActivityDependencies {
  db: Database;
  /** The carrier calls are placed through (lib/calls/carrier.ts). */
  calls: Carrier;
  /** The API's address as the carrier reaches it: status events go to <this>/telephony/{provider}/events. */
  statusCallbackBaseUrl: string;
  /** How long a lead waits for its call's terminal event before asking the carrier; default lib/calls/call-deadline.ts. */
  callEndDeadlineMs?: number;
  /** The progress events a dial subscribes to (TELEPHONY_STATUS_CALLBACK_EVENTS); default in-progress only. */
  statusCallbackEvents?: readonly SubscribableProgressState[];
  whatsapp: WhatsAppSender;
  /** The WhatsApp Business provider messages go through (docs/features/whatsapp.md); unset: sending fails. */
  whatsappProvider?: WhatsAppProvider;
  /** WHATSAPP_RESEND_AFTER_SECONDS in ms: when an ambiguous send is resolved (default 900 s). */
  whatsappResendAfterMs?: number;
  /** WHATSAPP_AMBIGUOUS_RESEND: whether such a send is ever resent (default never). */
  whatsappAmbiguousResend?: AmbiguousResendRule;
  /**
   * SIMULATORS (docs/configuration.md#simulators): enabled, a message the simulated provider carries holds no credits;
   * unset: billed, as the tests' workers are.
   */
  simulators?: SimulatorsSetting;
  /** To signal other workflows (a campaign wakes its leads). */
  temporal: Client;
  /** How long an order notification's delay minute lasts (activities/commerce/order-notifications.ts); tests only. */
  orderNotificationMinuteMs?: number;
  /**
   * The model that extracts and evaluates answered calls (INTELLIGENCE_PROVIDER, lib/providers.ts); unset: the embedded
   * rules (docs/features/call-intelligence.md).
   */
  callIntelligenceModel?: CallIntelligenceModel;
  /**
   * The threads CPU steps over tenant text run in, within a time budget (WORKER_CPU_BUDGET_MS, WORKER_CPU_THREADS;
   * docs/cpu-budget.md); unset: the process's shared ones with the default settings.
   */
  cpuBudget?: CpuBudget;
  /** The campaigns' carrier breaker; default lib/dial-ladder/carrier-breaker.ts (tests may narrow it). */
  carrierBreaker?: CarrierBreakerRule;
  /**
   * The one way out for URLs tenant data can touch: journey and result webhooks (lib/http/egress.ts). Unset: the
   * production guard, with no allowances (no http://, no loopback or private address).
   */
  egress?: Egress;
  /**
   * SECRETS_KEYS: opens the store connections' Admin API tokens (CRM imports) and the result webhook endpoints' signing
   * secrets; unset: such an import fails, and a delivery's attempts fail until it is set.
   */
  secretsKeyring?: Keyring;
  /** Where the calendar twins listen (GOOGLE_CALENDAR_TWIN_URL, CALCOM_TWIN_URL); unset: no -twin connection books. */
  calendarEndpoints?: CalendarEndpoints;
  /** Customers per Admin API page (default 250, Shopify's maximum); tests take smaller pages. */
  crmImportPageSize?: number;
  /** The most customers one CRM import lists (default 10,000); tests lower it. */
  crmImportMaxImported?: number;
}
