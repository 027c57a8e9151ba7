import { z } from 'zod';
import { jsonSetting, twinDatabaseProcessSchema, twinSettingsOrExit } from '../twin-common/config';

/**
 * The simulated WhatsApp provider's settings (Meta's twin when META_TWIN_ACCOUNTS is set), under the names the rest of
 * the stack gives them (docs/configuration.md), parsed here and not by the product's lib/config.ts.
 */
const metaTwinAccountsSchema = z.array(
  z.object({
    accessToken: z.string().min(8),
    businessAccountId: z.string().regex(/^\d{5,32}$/),
    phoneNumbers: z.array(z.object({ id: z.string().regex(/^\d{5,32}$/), displayPhoneNumber: z.string().min(1) })),
  }),
);

export const simulatedWhatsAppConfigSchema = twinDatabaseProcessSchema.extend({
  SIMULATED_WHATSAPP_PORT: z.coerce.number().int().min(0).max(65535).default(3200),
  SIMULATED_WHATSAPP_HOST: z.string().default('127.0.0.1'),
  /** 1: real time; 0.001 makes a 2 s template review take 2 ms (the 24-hour window is not scaled). */
  SIMULATED_WHATSAPP_TIME_SCALE: z.coerce.number().positive().max(100).default(1),
  /** The app's webhook subscription, as set in Meta's app dashboard: where every webhook goes. */
  SIMULATED_WHATSAPP_WEBHOOK_URL: z.string().url().default('http://127.0.0.1:3000/whatsapp/webhook'),
  /** The app secret every webhook is signed with (X-Hub-Signature-256). Never logged. */
  WHATSAPP_APP_SECRET: z.string().min(16, 'is required by the simulated WhatsApp provider (16 characters or more)'),
  /** JSON: [{ accessToken, businessAccountId, phoneNumbers: [{ id, displayPhoneNumber }] }]; unset: no twin accounts. */
  META_TWIN_ACCOUNTS: jsonSetting(metaTwinAccountsSchema.optional(), () => undefined),
});
export type SimulatedWhatsAppConfig = z.infer<typeof simulatedWhatsAppConfigSchema>;

/** The settings from the environment, or a line per fault (never a value: tokens and the secret) and exit 78. */
export const loadSimulatedWhatsAppConfigOrExit = (env: NodeJS.ProcessEnv = process.env): SimulatedWhatsAppConfig =>
  twinSettingsOrExit(simulatedWhatsAppConfigSchema, env);
