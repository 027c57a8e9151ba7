/**
 * A setting missing or wrong, named in the message (e.g. "config: SECRETS_KEYS is required but not set"): thrown by
 * lib/config.ts when the environment is parsed, and by a feature that finds at use that it needs a setting unset.
 * Here, not in lib/config.ts, so a feature can throw it without importing the schema of every setting.
 */
export class ConfigError extends Error {}
