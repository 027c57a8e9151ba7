import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../lib/config';
import { captureLogLines } from '../lib/log';
import { simulatedCarrierConfigSchema } from '../simulators/simulated-carrier/config';
import { twinConfigSchema as googleTwinConfigSchema } from '../simulators/google-twin/config';
import { shopifyTwinConfigSchema } from '../simulators/shopify-twin/admin-twin-config';

/*
 * Settings renamed to say what they select (lib/renamed-settings.ts, docs/configuration.md): the old name is read for
 * one deprecation period while the new one is unset, the new one wins when both are set, and a process given the old
 * name warns once naming the new one. A name warns once per process: each case below gives old names no other case
 * gave before it.
 */

const base = { DATABASE_URL: 'postgresql://user@127.0.0.1:5432/app' };
const carrierBase = { ...base, SIMULATED_CARRIER_SIGNING_SECRET: 'a-signing-secret-of-16+' };

let capture: ReturnType<typeof captureLogLines> | undefined;
const warnings = () => {
  capture ??= captureLogLines('warn');
  return capture.lines;
};
afterEach(() => {
  capture?.stop();
  capture = undefined;
});

describe('a renamed setting', () => {
  it('is read under its old name while the new one is unset, with one warning naming the new name', () => {
    const lines = warnings();
    const config = parseConfig({ ...base, SIMULATED_TELEPHONY_TIME_SCALE: '0.5', WHATSAPP_PROVIDER: 'simulated' });
    expect(config.SIMULATED_CARRIER_TIME_SCALE).toBe(0.5);
    expect(config.FALLBACK_WHATSAPP_PROVIDER).toBe('simulated');
    expect(lines.map((line) => [line.level, line.setting, line.replacement, line.msg])).toEqual([
      [
        'warn',
        'WHATSAPP_PROVIDER',
        'FALLBACK_WHATSAPP_PROVIDER',
        expect.stringMatching(/WHATSAPP_PROVIDER is deprecated: set FALLBACK_WHATSAPP_PROVIDER instead/),
      ],
      [
        'warn',
        'SIMULATED_TELEPHONY_TIME_SCALE',
        'SIMULATED_CARRIER_TIME_SCALE',
        expect.stringMatching(/SIMULATED_TELEPHONY_TIME_SCALE is deprecated: set SIMULATED_CARRIER_TIME_SCALE instead/),
      ],
    ]);
    // The configuration parsed again in the same process: no second warning.
    expect(parseConfig({ ...base, SIMULATED_TELEPHONY_TIME_SCALE: '0.25' }).SIMULATED_CARRIER_TIME_SCALE).toBe(0.25);
    expect(lines).toHaveLength(2);
  });

  it('gives way to its new name when both are set, and the warning says the old one is ignored', () => {
    const lines = warnings();
    const config = parseConfig({ ...base, TELEPHONY_PROVIDER: 'twilio', FALLBACK_CARRIER: 'simulated' });
    expect(config.FALLBACK_CARRIER).toBe('simulated');
    expect(lines.map((line) => line.msg)).toEqual([
      'config: TELEPHONY_PROVIDER is deprecated and ignored: FALLBACK_CARRIER is set',
    ]);
    expect(
      parseConfig({ ...base, SIMULATED_CARRIER_TIME_SCALE: '2', SIMULATED_TELEPHONY_TIME_SCALE: '3' }),
    ).toMatchObject({ SIMULATED_CARRIER_TIME_SCALE: 2 });
  });

  it('is refused under its new name when its old name holds a bad value', () => {
    warnings();
    expect(() => parseConfig({ ...base, TELEPHONY_PROVIDER: 'twilio' })).toThrow(
      /^config: FALLBACK_CARRIER is invalid/,
    );
    expect(() => parseConfig({ ...base, SIMULATED_TELEPHONY_TIME_SCALE: 'fast' })).toThrow(
      /^config: SIMULATED_CARRIER_TIME_SCALE is invalid/,
    );
  });

  it("is read under its old name by the simulators' own settings too, the new name winning", () => {
    const lines = warnings();
    expect(
      simulatedCarrierConfigSchema.parse({ ...carrierBase, SIMULATED_TELEPHONY_TIME_SCALE: '0.01' }),
    ).toMatchObject({
      SIMULATED_CARRIER_TIME_SCALE: 0.01,
    });
    expect(
      simulatedCarrierConfigSchema.parse({
        ...carrierBase,
        SIMULATED_TELEPHONY_TIME_SCALE: '0.01',
        SIMULATED_CARRIER_TIME_SCALE: '0.5',
      }),
    ).toMatchObject({ SIMULATED_CARRIER_TIME_SCALE: 0.5 });

    const accounts = JSON.stringify([{ clientEmail: 'twin@example.iam.gserviceaccount.com', publicKeyPem: 'pem' }]);
    expect(
      googleTwinConfigSchema.parse({ GOOGLE_SHEETS_TWIN_PORT: '3701', GOOGLE_SHEETS_TWIN_ACCOUNTS: accounts }),
    ).toMatchObject({
      GOOGLE_TWIN_PORT: 3701,
      GOOGLE_TWIN_ACCOUNTS: [{ clientEmail: 'twin@example.iam.gserviceaccount.com' }],
    });
    expect(googleTwinConfigSchema.parse({ GOOGLE_SHEETS_TWIN_PORT: '3701', GOOGLE_TWIN_PORT: '3702' })).toMatchObject({
      GOOGLE_TWIN_PORT: 3702,
    });

    expect(shopifyTwinConfigSchema.parse({ STORE_TWIN_BUCKET_SIZE: '40', STORE_TWIN_RESTORE_RATE: '2' })).toMatchObject(
      {
        SHOPIFY_TWIN_BUCKET_SIZE: 40,
        SHOPIFY_TWIN_RESTORE_RATE: 2,
      },
    );
    expect(shopifyTwinConfigSchema.parse({ STORE_TWIN_PORT: '3601', SHOPIFY_TWIN_PORT: '3602' })).toMatchObject({
      SHOPIFY_TWIN_PORT: 3602,
    });

    expect(lines.map((line) => line.setting)).toEqual([
      'GOOGLE_SHEETS_TWIN_PORT',
      'GOOGLE_SHEETS_TWIN_ACCOUNTS',
      'STORE_TWIN_BUCKET_SIZE',
      'STORE_TWIN_RESTORE_RATE',
      'STORE_TWIN_PORT',
    ]);
  });
});
