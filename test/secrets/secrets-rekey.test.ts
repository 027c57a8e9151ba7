import { describe, expect, it } from 'vitest';
import { openCarrierConnection } from '../../lib/carrier-connections/connections';
import { EnvelopeError } from '../../lib/secrets/envelope';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { sealingAdminCli } from '../support/admin-cli';
import { useTestDatabase } from '../support/database';
import { WEBHOOK_SECRET_COLUMNS, webhookSecretOf } from '../../lib/crm/webhook-secret';
import { ENDPOINT_SECRET_COLUMNS, openEndpointSecret } from '../../lib/result-webhooks/endpoint-secrets';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openCrmAdminConnection } from '../../lib/crm/admin-token';
import { rowOnlyAdditionalData } from '../../lib/secrets/binding';
import { open, seal } from '../../lib/secrets/envelope';
import { envelopeColumns, envelopeFromColumns } from '../../lib/secrets/sealed-rows';
import { connectSheets } from '../../lib/sheets/connections';
import { openSheetConnection } from '../../lib/sheets/opened-connection';
import { openWhatsAppConnection } from '../../lib/whatsapp/connections';
import { ensureGoogleTwinDevKey } from '../../scripts/stack/provider-twins';
import { createSqlPool } from '../../lib/sql-pool';

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
      'calendarConnections',
      'carrierConnections',
      'crmAdminTokens',
      'crmWebhookSecrets',
      'functionSigningSecrets',
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

  it('binds every sealed row to its provider and base URL: rows sealed before open and are moved by the rekey; a moved base URL does not open', async () => {
    const ring = keyringSchema.parse(k1);
    const workspace = await adminJson(k1, 'workspace', 'create', '--name', 'Bound secrets');
    const carrier = await connectTwilio(k1, workspace.id);
    const whatsapp = await adminJson(
      k1,
      ...['whatsapp', 'connect', '--workspace', workspace.id, '--provider', 'meta-twin'],
      ...['--base-url', 'http://127.0.0.1:9', '--phone-number-id', '1234567891', '--business-account-id', '987654321'],
      ...['--display-number', '15551234568', '--access-token', TOKEN],
    );
    const { keyJson } = ensureGoogleTwinDevKey(
      'http://127.0.0.1:9',
      path.join(mkdtempSync(path.join(os.tmpdir(), 'bound-')), 'key.pem'),
    );
    const sheet = await connectSheets(db, ring, {
      workspaceId: workspace.id,
      provider: 'google-twin',
      baseUrl: 'http://127.0.0.1:9/',
      keyJson,
    });
    const store = await db.crmConnection.create({
      data: { workspaceId: workspace.id, kind: 'shopify', shopDomain: 'bound-secrets.myshopify.com' },
    });
    const sql = createSqlPool(url);
    const opened = {
      carrier: async () => (await openCarrierConnection(db, ring, carrier.id))!.secrets,
      whatsapp: async () => (await openWhatsAppConnection(db, ring, whatsapp.id))!.accessToken,
      sheet: async () => (await openSheetConnection(sql, ring, sheet.id))!.key.client_email,
      store: async () => (await openCrmAdminConnection(db, ring, store.id))!.accessToken,
    };
    try {
      // Each as the versions before the binding sealed it: under the row and workspace only.
      const legacy = (kind: string, id: string, secret: string) =>
        envelopeColumns(seal(ring, secret, rowOnlyAdditionalData(kind, { workspaceId: workspace.id, id })));
      await db.carrierConnection.update({
        where: { id: carrier.id },
        data: legacy('carrier-connection', carrier.id, JSON.stringify({ authToken: TOKEN })),
      });
      await db.whatsAppConnection.update({
        where: { id: whatsapp.id },
        data: legacy('whatsapp-connection', whatsapp.id, JSON.stringify({ accessToken: TOKEN })),
      });
      const key = (await openSheetConnection(sql, ring, sheet.id))!.key;
      await db.sheetConnection.update({
        where: { id: sheet.id },
        data: legacy('sheet-connection', sheet.id, JSON.stringify(key)),
      });
      await db.crmConnection.update({
        where: { id: store.id },
        data: { ...legacy('crm-connection-admin-token', store.id, TOKEN), adminProvider: 'shopify' },
      });
      const legacyOpens = async () => {
        const rows = [
          ['carrier-connection', await db.carrierConnection.findUniqueOrThrow({ where: { id: carrier.id } })],
          ['whatsapp-connection', await db.whatsAppConnection.findUniqueOrThrow({ where: { id: whatsapp.id } })],
          ['sheet-connection', await db.sheetConnection.findUniqueOrThrow({ where: { id: sheet.id } })],
          ['crm-connection-admin-token', await db.crmConnection.findUniqueOrThrow({ where: { id: store.id } })],
        ] as const;
        return rows.map(([kind, row]) => {
          try {
            open(ring, envelopeFromColumns(row)!, rowOnlyAdditionalData(kind, row));
            return true;
          } catch {
            return false;
          }
        });
      };
      expect(await legacyOpens()).toEqual([true, true, true, true]);
      // Until the rekey, they open as they were sealed.
      expect(await opened.carrier()).toEqual({ authToken: TOKEN });
      expect(await opened.whatsapp()).toBe(TOKEN);
      expect(await opened.sheet()).toBe(key.client_email);
      expect(await opened.store()).toBe(TOKEN);

      // Under the current key already, yet moved: sealed anew under their binding.
      const everyKey = `${k1},${k2},${k0}`;
      const moved = await adminJson(everyKey, 'secrets', 'rekey');
      expect(moved.rekeyed.carrierConnections).toContain(carrier.id);
      expect(moved.rekeyed.whatsappConnections).toContain(whatsapp.id);
      expect(moved.rekeyed.sheetConnections).toContain(sheet.id);
      expect(moved.rekeyed.crmAdminTokens).toContain(store.id);
      expect(await legacyOpens()).toEqual([false, false, false, false]);
      expect(await opened.carrier()).toEqual({ authToken: TOKEN });
      expect(await opened.whatsapp()).toBe(TOKEN);
      expect(await opened.sheet()).toBe(key.client_email);
      expect(await opened.store()).toBe(TOKEN);
      const again = await adminJson(everyKey, 'secrets', 'rekey');
      for (const [kind, id] of [
        ['carrierConnections', carrier.id],
        ['whatsappConnections', whatsapp.id],
        ['sheetConnections', sheet.id],
        ['crmAdminTokens', store.id],
      ])
        expect(again.rekeyed[kind]).not.toContain(id);

      // A base URL (or provider) changed in the table behind the product's back: the credentials do not open there.
      const elsewhere = 'http://169.254.169.254';
      await db.carrierConnection.update({ where: { id: carrier.id }, data: { baseUrl: elsewhere } });
      await db.whatsAppConnection.update({ where: { id: whatsapp.id }, data: { provider: 'meta' } });
      await db.sheetConnection.update({ where: { id: sheet.id }, data: { baseUrl: `${elsewhere}/` } });
      await db.crmConnection.update({ where: { id: store.id }, data: { adminBaseUrl: elsewhere } });
      for (const attempt of Object.values(opened)) {
        const error = await attempt().then(
          () => null,
          (refused: unknown) => refused,
        );
        expect(error).toBeInstanceOf(EnvelopeError);
        expect((error as Error).message).toMatch(/fails authentication .*provider or base URL/);
        expect((error as Error).message).not.toContain(TOKEN);
      }
      // Nor does the rekey move them: named, left as they are, the secret never printed.
      const refused = await admin(everyKey, 'secrets', 'rekey');
      expect(refused.code).toBe(1);
      for (const id of [carrier.id, whatsapp.id, sheet.id, store.id]) expect(refused.stderr).toContain(id);
      expect(refused.stdout + refused.stderr).not.toContain(TOKEN);
    } finally {
      await sql.end();
    }
  });
});
