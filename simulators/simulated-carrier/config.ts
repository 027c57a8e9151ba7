import { z } from 'zod';
import { withRenamedSettings } from '../../lib/renamed-settings';
import { twinDatabaseProcessSchema, twinSettingsOrExit } from '../twin-common/config';

/**
 * The simulated carrier's settings, under the names the rest of the stack gives them (docs/configuration.md), parsed
 * here and not by the product's lib/config.ts: the carrier reads none of the product's other settings.
 */
export const simulatedCarrierConfigSchema = withRenamedSettings(
  { SIMULATED_CARRIER_TIME_SCALE: 'SIMULATED_TELEPHONY_TIME_SCALE' },
  twinDatabaseProcessSchema.extend({
    SIMULATED_CARRIER_PORT: z.coerce.number().int().min(0).max(65535).default(3100),
    SIMULATED_CARRIER_HOST: z.string().default('127.0.0.1'),
    /** Signs every status event (the API checks it at POST /telephony/simulated/events). Never logged. */
    SIMULATED_CARRIER_SIGNING_SECRET: z
      .string()
      .min(16, 'is required by the simulated carrier (16 characters or more)'),
    /** 1: real time; 0.001 makes a 40 s call last 40 ms (tests, benches). Formerly SIMULATED_TELEPHONY_TIME_SCALE. */
    SIMULATED_CARRIER_TIME_SCALE: z.coerce.number().positive().max(100).default(1),
  }),
);
export type SimulatedCarrierConfig = z.infer<typeof simulatedCarrierConfigSchema>;

/** The settings from the environment, or a line per fault (never a value: the signing secret) and exit 78. */
export const loadSimulatedCarrierConfigOrExit = (env: NodeJS.ProcessEnv = process.env): SimulatedCarrierConfig =>
  twinSettingsOrExit(simulatedCarrierConfigSchema, env);
