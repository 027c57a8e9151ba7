import { describe, expect, it } from 'vitest';
import { connectCarrier } from '../../lib/carrier-connections/connections';
import { realBaseUrlRefusal } from '../../lib/provider-base-urls';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { connectSheets } from '../../lib/sheets/connections';
import { GOOGLE_TOKEN_URL } from '../../lib/sheets/service-account-key';
import { connectWhatsApp } from '../../lib/whatsapp/connections';
import { createServiceAccountKey } from '../../simulators/google-twin/oauth';
import { sealingAdminCli } from '../support/admin-cli';
import { useTestDatabase } from '../support/database';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const keys = newKeyringEntry('k1');
const keyring = keyringSchema.parse(keys);
const owner = await createTestWorkspace(db, {});
const TOKEN = 'tok3n-that-must-never-be-shown-0';
/** A Twilio account (its SID made of `digit`) connected at `baseUrl`. */
const twilioAt = (provider: 'twilio' | 'twilio-twin', baseUrl: string, digit: string) =>
  connectCarrier(db, keyring, {
    workspaceId: owner.workspaceId,
    provider,
    baseUrl,
    account: { family: 'twilio', accountSid: `AC${digit.repeat(32)}`, secrets: { authToken: TOKEN } },
  });

describe("a real provider's base URL: https on its own hosts only", () => {
  it.each([
    ['twilio', 'https://api.twilio.com'],
    ['twilio', 'https://api.sydney.au1.twilio.com'],
    ['twilio', 'https://api.dublin.ie1.twilio.com/'],
    ['twilio', 'https://api.sao-paulo.br1.twilio.com'],
    ['telnyx', 'https://api.telnyx.com/v2'],
    ['meta', 'https://graph.facebook.com'],
    ['google', 'https://sheets.googleapis.com'],
    ['google', 'https://oauth2.googleapis.com'],
    ['shopify', 'https://example-shop.myshopify.com'],
  ] as const)('takes %s at %s', (provider, baseUrl) => {
    expect(realBaseUrlRefusal(provider, baseUrl)).toBeNull();
  });

  it.each([
    ['twilio', 'http://api.twilio.com'],
    ['twilio', 'https://api.twilio.com.attacker.example'],
    ['twilio', 'https://attacker.example/api.twilio.com'],
    ['twilio', 'https://api.ie1.twilio.com'],
    ['twilio', 'https://evil.twilio.com'],
    ['twilio', 'https://user:pass@api.twilio.com'],
    ['twilio', 'https://api.twilio.com:8443'],
    ['telnyx', 'http://api.telnyx.com/v2'],
    ['telnyx', 'https://127.0.0.1/v2'],
    ['meta', 'https://graph.facebook.com.evil.example'],
    ['meta', 'http://169.254.169.254/latest'],
    ['google', 'https://www.googleapis.com'],
    ['shopify', 'https://myshopify.com.evil.example'],
    ['shopify', 'not a url'],
  ] as const)('refuses %s at %s, naming the rule and never the URL', (provider, baseUrl) => {
    const refusal = realBaseUrlRefusal(provider, baseUrl);
    expect(refusal).toMatch(new RegExp(`^a ${provider} connection's base URL must be https://`));
    expect(refusal).not.toContain(baseUrl);
  });

  it('refuses a longest URL at once: its length is capped before it is parsed', () => {
    const long = `https://api.twilio.com/${'a'.repeat(1_000_000)}`;
    expect(realBaseUrlRefusal('twilio', long)).toMatch(/must be https/);
  });

  it('refuses a real carrier, Meta or Google connection elsewhere, at connect time, and stores nothing', async () => {
    const before = {
      carriers: await db.carrierConnection.count(),
      whatsapp: await db.whatsAppConnection.count(),
      sheets: await db.sheetConnection.count(),
    };
    await expect(twilioAt('twilio', 'http://api.twilio.com', '0')).rejects.toThrow(
      /twilio connection's base URL must be https:\/\/api\.twilio\.com/,
    );
    await expect(
      connectCarrier(db, keyring, {
        workspaceId: owner.workspaceId,
        provider: 'telnyx',
        baseUrl: 'https://telnyx.attacker.example/v2',
        account: { family: 'telnyx', connectionId: '123', secrets: { apiKey: TOKEN, publicKey: 'A'.repeat(43) + '=' } },
      }),
    ).rejects.toThrow(/telnyx connection's base URL must be https:\/\/api\.telnyx\.com/);
    await expect(
      connectWhatsApp(db, keyring, {
        workspaceId: owner.workspaceId,
        provider: 'meta',
        baseUrl: 'http://graph.facebook.com',
        phoneNumberId: '1234567890',
        businessAccountId: '987654321',
        displayPhoneNumber: '15551234567',
        accessToken: TOKEN,
      }),
    ).rejects.toThrow(/meta connection's base URL must be https:\/\/graph\.facebook\.com/);
    const { key: elsewhere } = createServiceAccountKey({
      clientEmail: 'sheets@customer.iam.gserviceaccount.com',
      projectId: 'customer',
      tokenUri: 'https://attacker.example/token',
    });
    await expect(
      connectSheets(db, keyring, {
        workspaceId: owner.workspaceId,
        provider: 'google',
        keyJson: JSON.stringify(elsewhere),
      }),
    ).rejects.toThrow(`a google connection's key must have token_uri ${GOOGLE_TOKEN_URL}`);
    await expect(
      connectSheets(db, keyring, {
        workspaceId: owner.workspaceId,
        provider: 'google',
        baseUrl: 'https://sheets.attacker.example',
        keyJson: JSON.stringify({ ...elsewhere, token_uri: GOOGLE_TOKEN_URL }),
      }),
    ).rejects.toThrow(/google connection's base URL must be https:\/\/sheets\.googleapis\.com/);
    expect({
      carriers: await db.carrierConnection.count(),
      whatsapp: await db.whatsAppConnection.count(),
      sheets: await db.sheetConnection.count(),
    }).toEqual(before);

    // The same rules take the real hosts, and a twin takes any http(s) URL.
    expect((await twilioAt('twilio', 'https://api.sydney.au1.twilio.com', '1')).baseUrl).toBe(
      'https://api.sydney.au1.twilio.com',
    );
    expect((await twilioAt('twilio-twin', 'http://127.0.0.1:9', '2')).baseUrl).toBe('http://127.0.0.1:9');
  });

  it('refuses it in the CLI with a one-line message, as a usage error (exit 64)', async () => {
    const { admin } = sealingAdminCli(url, keys);
    const result = await admin([
      ...['carrier', 'connect', '--workspace', owner.workspaceId, '--provider', 'twilio'],
      ...['--base-url', 'http://api.twilio.com', '--account-sid', `AC${'3'.repeat(32)}`, '--auth-token', TOKEN],
    ]);
    expect(result.code).toBe(64);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/twilio connection's base URL must be https:\/\/api\.twilio\.com/);
    expect(result.stderr).not.toContain(TOKEN);
  });
});
