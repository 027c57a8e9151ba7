// The carriers' signatures as their official SDKs check them (docs/features/carriers/conformance.md): Twilio's
// published request-validation example through `twilio`'s validateRequest, and a Telnyx Ed25519 webhook signed
// here with node:crypto, verified by the `telnyx` SDK.
import { generateKeyPairSync, sign } from 'node:crypto';
import Telnyx from 'telnyx';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { carrierDescription } from '../support/carrier-openapi';
import { telnyxHangupEvent } from '../support/telnyx-events';

describe("Twilio's X-Twilio-Signature, by the twilio SDK", () => {
  // Twilio's documentation: https://www.twilio.com/docs/usage/security#validating-requests
  const authToken = '12345';
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  const params = {
    CallSid: 'CA1234567890ABCDE',
    Caller: '+14158675309',
    Digits: '1234',
    From: '+14158675309',
    To: '+18005551212',
  };
  const signature = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';

  it("accepts the published example's signature", () => {
    expect(twilio.validateRequest(authToken, signature, url, params)).toBe(true);
  });

  it('refuses it when a parameter, the URL or the token changes', () => {
    expect(twilio.validateRequest(authToken, signature, url, { ...params, Digits: '1235' })).toBe(false);
    expect(twilio.validateRequest(authToken, signature, url, { ...params, Extra: '' })).toBe(false);
    expect(twilio.validateRequest(authToken, signature, url.replace('bar=2', 'bar=3'), params)).toBe(false);
    expect(twilio.validateRequest('54321', signature, url, params)).toBe(false);
  });
});

describe("Telnyx's Ed25519 webhook signature, by the telnyx SDK", () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  // Telnyx's portal shows the public key as base64 of its 32 raw bytes.
  const publicKeyBase64 = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
  const client = new Telnyx({ apiKey: 'KEY_not_used', publicKey: publicKeyBase64, maxRetries: 0 });

  /** The headers Telnyx sends: telnyx-timestamp, and an Ed25519 signature of `timestamp|body`, base64. */
  const signed = (body: string, timestamp = Math.floor(Date.now() / 1000)) => ({
    'telnyx-timestamp': String(timestamp),
    'telnyx-signature-ed25519': sign(null, Buffer.from(`${timestamp}|${body}`), privateKey).toString('base64'),
  });

  const body = JSON.stringify(telnyxHangupEvent(new Date().toISOString()));

  it('verifies a delivery signed with the key pair, which also conforms to the vendored webhook', async () => {
    const headers = signed(body);
    const event = await client.webhooks.unwrap(body, { headers });
    expect(event).toMatchObject({ data: { event_type: 'call.hangup' } });
    expect(carrierDescription('telnyx').webhookProblems('callHangup', { headers, body })).toEqual([]);
  });

  it('refuses a tampered body, a stale or future timestamp, another key and a missing signature', async () => {
    const headers = signed(body);
    await expect(client.webhooks.unwrap(body.replace('normal_clearing', 'user_busy'), { headers })).rejects.toThrow(
      /signature does not match/,
    );
    const stale = Math.floor(Date.now() / 1000) - 301;
    await expect(client.webhooks.unwrap(body, { headers: signed(body, stale) })).rejects.toThrow(/too old or too new/);
    await expect(client.webhooks.unwrap(body, { headers: signed(body, stale + 602) })).rejects.toThrow(
      /too old or too new/,
    );
    // A signature made for another timestamp than the one sent.
    await expect(
      client.webhooks.unwrap(body, {
        headers: { ...headers, 'telnyx-timestamp': String(Number(headers['telnyx-timestamp']) - 1) },
      }),
    ).rejects.toThrow(/signature does not match/);
    const other = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!;
    await expect(
      client.webhooks.unwrap(body, { headers, key: Buffer.from(other, 'base64url').toString('base64') }),
    ).rejects.toThrow(/signature does not match/);
    await expect(
      client.webhooks.unwrap(body, { headers: { 'telnyx-timestamp': headers['telnyx-timestamp'] } }),
    ).rejects.toThrow(/Missing required header/);
  });
});
