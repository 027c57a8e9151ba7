import { z } from 'zod';
import { withRenamedSettings } from '../../lib/renamed-settings';
import { jsonSetting, twinSettingsOrExit } from '../twin-common/config';

/**
 * The twin's settings (docs/features/sheets.md#the-google-sheets-twin), named GOOGLE_TWIN_* as the twin is (provider
 * google-twin); formerly GOOGLE_SHEETS_TWIN_*, still read while the new name is unset.
 */
export const twinConfigSchema = withRenamedSettings(
  {
    GOOGLE_TWIN_PORT: 'GOOGLE_SHEETS_TWIN_PORT',
    GOOGLE_TWIN_HOST: 'GOOGLE_SHEETS_TWIN_HOST',
    GOOGLE_TWIN_WRITES_PER_WINDOW: 'GOOGLE_SHEETS_TWIN_WRITES_PER_WINDOW',
    GOOGLE_TWIN_QUOTA_WINDOW_MS: 'GOOGLE_SHEETS_TWIN_QUOTA_WINDOW_MS',
    GOOGLE_TWIN_ACCOUNTS: 'GOOGLE_SHEETS_TWIN_ACCOUNTS',
  },
  z.object({
    GOOGLE_TWIN_PORT: z.coerce.number().int().min(0).max(65535).default(3700),
    GOOGLE_TWIN_HOST: z.string().default('127.0.0.1'),
    /** Write requests per account per window: Google's "write requests per minute per user per project", 60. */
    GOOGLE_TWIN_WRITES_PER_WINDOW: z.coerce.number().int().min(1).max(100_000).default(60),
    /** The quota's window: 60,000 ms as Google's; shorter to compress a minute in tests. */
    GOOGLE_TWIN_QUOTA_WINDOW_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
    /** JSON: [{ clientEmail, publicKeyPem }]: accounts known from the start (others via POST /control/service-accounts). */
    GOOGLE_TWIN_ACCOUNTS: jsonSetting(
      z.array(z.object({ clientEmail: z.string().email(), publicKeyPem: z.string().min(1) })),
      () => [],
    ),
  }),
);
export type GoogleTwinConfig = z.infer<typeof twinConfigSchema>;

export function loadTwinConfigOrExit(env: NodeJS.ProcessEnv = process.env): GoogleTwinConfig {
  return twinSettingsOrExit(twinConfigSchema, env);
}
