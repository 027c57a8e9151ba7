import { z } from 'zod';
import { jsonSetting, twinSettingsOrExit } from '../twin-common/config';

/**
 * The twin's development credentials: fake and public, accepted by the twin, never by AWS (no access key has this id).
 * The development stack gives the product the same pair (POLLY_ACCESS_KEY_ID, POLLY_SECRET_ACCESS_KEY).
 */
export const DEVELOPMENT_POLLY_CREDENTIALS = {
  accessKeyId: 'AKIAPOLLYTWINEXAMPLE',
  secretAccessKey: 'polly-twin-secret-not-a-real-secret',
} as const;

const credentialsSchema = z
  .array(z.object({ accessKeyId: z.string().regex(/^[A-Z0-9]{16,128}$/), secretAccessKey: z.string().min(1) }))
  .min(1);

/** The Polly twin's settings (docs/features/voices.md#the-polly-twin), beside SHUTDOWN_GRACE_MS and LOG_LEVEL. */
export const pollyTwinConfigSchema = z.object({
  POLLY_TWIN_PORT: z.coerce.number().int().min(0).max(65535).default(3800),
  POLLY_TWIN_HOST: z.string().default('127.0.0.1'),
  /** The region it answers as: a request signed for another is refused, as AWS does. */
  POLLY_TWIN_REGION: z.string().min(1).default('us-east-1'),
  /** JSON: [{ accessKeyId, secretAccessKey }] it accepts; default: DEVELOPMENT_POLLY_CREDENTIALS. */
  POLLY_TWIN_CREDENTIALS: jsonSetting(credentialsSchema, () => [{ ...DEVELOPMENT_POLLY_CREDENTIALS }]),
});
export type PollyTwinConfig = z.infer<typeof pollyTwinConfigSchema>;

/** The settings from the environment, or a line per fault (never a value: secrets) and exit 78. */
export function loadPollyTwinConfigOrExit(env: NodeJS.ProcessEnv = process.env): PollyTwinConfig {
  return twinSettingsOrExit(pollyTwinConfigSchema, env);
}
