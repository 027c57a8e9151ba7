import { z } from 'zod';

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
