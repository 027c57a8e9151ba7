import { describe, expect, it } from 'vitest';
import { openCarrierConnection } from '../../lib/carriers/connections';
import { EnvelopeError } from '../../lib/secrets/envelope';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { sealingAdminCli } from '../support/admin-cli';
import { useTestDatabase } from '../support/database';
import { WEBHOOK_SECRET_COLUMNS, webhookSecretOf } from '../../lib/crm/webhook-secret';
import { ENDPOINT_SECRET_COLUMNS, openEndpointSecret } from '../../lib/result-webhooks/endpoint-secrets';

const { db, url } = await useTestDatabase();
const k0 = newKeyringEntry('k0');
const k1 = newKeyringEntry('k1');
const k2 = newKeyringEntry('k2');
const cli = sealingAdminCli(url, k1);
const admin = (keys: string, ...args: string[]) => cli.admin(args, { keys });
const adminJson = (keys: string, ...args: string[]) => cli.adminJson(args, { keys });
const TOKEN = 'tok3n-that-must-never-be-shown-0';
const connectTwilio = (keys: string, workspaceId: string) =>
  adminJson(
    keys,
    ...['carrier', 'connect', '--workspace', workspaceId, '--provider', 'twilio'],
    ...['--account-sid', `AC${'0123456789abcdef'.repeat(2)}`, '--auth-token', TOKEN],
  );

describe('npm run admin: secrets rekey moves every sealed row of every provider to the current key', () => {
  it('moves what opens, names what does not, and answers by kind of row', async () => {
    const workspace = await adminJson(k1, 'workspace', 'create', '--name', 'Rekey');
    const underK1 = await connectTwilio(k1, workspace.id);
    const alsoUnderK1 = await connectTwilio(k1, workspace.id);
    const whatsapp = await adminJson(
      k1,
      ...['whatsapp', 'connect', '--workspace', workspace.id, '--provider', 'meta-twin'],
      ...['--base-url', 'http://127.0.0.1:9', '--phone-number-id', '1234567890', '--business-account-id', '987654321'],
      ...['--display-number', '15551234567', '--access-token', TOKEN],
    );

    const moved = await adminJson(`${k2},${k1}`, 'secrets', 'rekey');
    expect(moved.keyId).toBe('k2');
    expect(moved.rekeyed.carrierConnections).toEqual(expect.arrayContaining([underK1.id, alsoUnderK1.id]));
    // Every kind of sealed row is named in the answer, each with what it moved.
    expect(Object.keys(moved.rekeyed).sort()).toEqual([
      'carrierConnections',
      'crmAdminTokens',
      'crmWebhookSecrets',
      'resultWebhookEndpoints',
      'sheetConnections',
      'whatsappConnections',
    ]);
    expect(moved.rekeyed.whatsappConnections).toEqual([whatsapp.id]);
    expect((await db.whatsAppConnection.findUniqueOrThrow({ where: { id: whatsapp.id } })).secretKeyId).toBe('k2');
    // k1 may now leave the ring: the rows open under k2 alone, and no longer under k1 alone.
    expect((await openCarrierConnection(db, keyringSchema.parse(k2), underK1.id))?.secrets).toEqual({
      authToken: TOKEN,
    });
    await expect(openCarrierConnection(db, keyringSchema.parse(k1), underK1.id)).rejects.toThrow(EnvelopeError);
    // Nothing left to move: a second run moves nothing.
    expect((await adminJson(`${k2},${k1}`, 'secrets', 'rekey')).rekeyed.carrierConnections).toEqual([]);

    // A row sealed under a key already dropped from the ring is named and left; the others move all the same.
    const lost = await connectTwilio(k0, workspace.id);
    const fresh = await connectTwilio(k1, workspace.id);
    const partial = await admin(k2 + ',' + k1, 'secrets', 'rekey');
    expect(partial.code).toBe(1);
    expect(partial.stderr).toContain(lost.id);
    expect(partial.stderr).toMatch(/rekeyed 1 row\(s\) to key "k2"; 1 could not be opened/);
    expect(partial.stderr + partial.stdout).not.toContain(TOKEN);
    expect((await db.carrierConnection.findUniqueOrThrow({ where: { id: fresh.id } })).secretKeyId).toBe('k2');
    expect((await db.carrierConnection.findUniqueOrThrow({ where: { id: lost.id } })).secretKeyId).toBe('k0');
  });

  it('seals the secrets once kept in clear (result webhook endpoints, store webhooks), emptying the clear column', async () => {
    const workspace = await adminJson(k1, 'workspace', 'create', '--name', 'Clear secrets');
    // Rows as the versions before sealing wrote them: the secret in clear, no envelope.
    const ENDPOINT_SECRET = 'whsec_c2VjcmV0LWtlcHQtaW4tY2xlYXItYmVmb3JlLXNlYWxpbmc=';
    const STORE_SECRET = 'shpss_kept_in_clear_before_sealing';
    const endpoint = await db.resultWebhookEndpoint.create({
      data: { workspaceId: workspace.id, url: 'https://hooks.example.com/clear', secret: ENDPOINT_SECRET },
    });
    const removed = await db.resultWebhookEndpoint.create({
      data: { workspaceId: workspace.id, url: 'https://hooks.example.com/gone', secret: ENDPOINT_SECRET },
    });
    await db.resultWebhookEndpoint.update({ where: { id: removed.id }, data: { deletedAt: new Date() } });
    const store = await db.crmConnection.create({
      data: {
        workspaceId: workspace.id,
        kind: 'shopify',
        shopDomain: 'clear-secret.myshopify.com',
        secret: STORE_SECRET,
      },
    });
    // Until the rekey, the clear value still serves (nothing breaks between the deploy and the run).
    const endpointRow = () =>
      db.resultWebhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id }, select: ENDPOINT_SECRET_COLUMNS });
    const storeRow = () =>
      db.crmConnection.findUniqueOrThrow({ where: { id: store.id }, select: WEBHOOK_SECRET_COLUMNS });
    expect(openEndpointSecret(undefined, await endpointRow())).toBe(ENDPOINT_SECRET);
    expect(webhookSecretOf(undefined, await storeRow())).toBe(STORE_SECRET);

    // Every key the file's rows may be under is in the ring (the test before leaves one under k0): the run exits 0.
    const ring = `${k1},${k2},${k0}`;
    const result = await admin(ring, 'secrets', 'rekey');
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(ENDPOINT_SECRET);
    expect(result.stdout + result.stderr).not.toContain(STORE_SECRET);
    const answer = JSON.parse(result.stdout) as { rekeyed: Record<string, string[]> };
    expect(answer.rekeyed.resultWebhookEndpoints).toEqual([endpoint.id]);
    expect(answer.rekeyed.crmWebhookSecrets).toContain(store.id);

    // Sealed under k1, the clear column empty, and the envelope opens to the same secret for this row only.
    const sealedEndpoint = await endpointRow();
    expect(sealedEndpoint).toMatchObject({ secret: null, secretKeyId: 'k1' });
    expect(openEndpointSecret(keyringSchema.parse(k1), sealedEndpoint)).toBe(ENDPOINT_SECRET);
    const sealedStore = await storeRow();
    expect(sealedStore).toMatchObject({ secret: null, webhookSecretKeyId: 'k1' });
    expect(webhookSecretOf(keyringSchema.parse(k1), sealedStore)).toBe(STORE_SECRET);
    expect(webhookSecretOf(keyringSchema.parse(k1), { ...sealedStore, workspaceId: removed.id })).toBeNull();

    // A second run finds nothing in clear; a new key moves them like any sealed row.
    const again = await adminJson(ring, 'secrets', 'rekey');
    expect(again.rekeyed.resultWebhookEndpoints).toEqual([]);
    const moved = await adminJson(`${k2},${k1},${k0}`, 'secrets', 'rekey');
    expect(moved.rekeyed.resultWebhookEndpoints).toEqual([endpoint.id]);
    expect(openEndpointSecret(keyringSchema.parse(k2), await endpointRow())).toBe(ENDPOINT_SECRET);
    expect(webhookSecretOf(keyringSchema.parse(k2), await storeRow())).toBe(STORE_SECRET);
  });
});
