import { z } from 'zod';
import { LOG_LEVELS } from '../../lib/log';

/**
 * A setting holding JSON that `schema` checks (a twin's accounts); unset, `fallback()`. A fault names where in the
 * JSON it is, never a value: the accounts hold secrets.
 */
export function jsonSetting<T extends z.ZodTypeAny>(schema: T, fallback: () => z.output<T>) {
  return z
    .string()
    .optional()
    .transform((text, context): z.output<T> => {
      if (text === undefined) return fallback();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        context.addIssue({ code: 'custom', message: 'is not JSON' });
        return z.NEVER;
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          context.addIssue({ code: 'custom', message: `${issue.path.join('.')}: ${issue.message}` });
        return z.NEVER;
      }
      return parsed.data;
    });
}

/** A twin's settings from the environment, or a line per fault (never a value: they hold secrets) and exit 78. */
export function twinSettingsOrExit<T extends z.ZodTypeAny>(schema: T, env: NodeJS.ProcessEnv): z.output<T> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) process.stderr.write(`config: ${issue.path.join('.')}: ${issue.message}\n`);
  process.exit(78);
}

/**
 * What every twin process reads beside its own settings, under the names the rest of the stack uses, parsed here and
 * not by the product's lib/config.ts: a twin must not fail, or change, because the product's settings did. The
 * bounds are the product's (docs/operations-stopping.md, lib/log.ts) so one environment serves both.
 */
export const twinProcessSchema = z.object({
  /** How long the process takes, at most, from SIGTERM or SIGINT until it has exited (lib/shutdown.ts). */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(100).max(3_600_000).default(8_000),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
});

/** The process settings of a twin that keeps its state in PostgreSQL. */
export const twinDatabaseProcessSchema = twinProcessSchema.extend({
  DATABASE_URL: z.string().url().startsWith('postgres'),
});

/** twinProcessSchema from the environment, or exit 78 naming the fault. */
export const twinProcessSettingsOrExit = (env: NodeJS.ProcessEnv = process.env) =>
  twinSettingsOrExit(twinProcessSchema, env);

/** twinDatabaseProcessSchema from the environment, or exit 78 naming the fault. */
export const twinDatabaseProcessSettingsOrExit = (env: NodeJS.ProcessEnv = process.env) =>
  twinSettingsOrExit(twinDatabaseProcessSchema, env);
