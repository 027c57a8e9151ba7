import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openCrmAdminConnection } from '../../lib/crm/admin-token';
import { createWorkspace } from '../../lib/door/workspace-admin';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { openWhatsAppConnection } from '../../lib/whatsapp/connections';
import {
  ensureGoogleTwinConnection,
  ensureGoogleTwinDevKey,
  ensureMetaTwinConnection,
  ensureShopifyTwinConnection,
  GOOGLE_TWIN_DEV_ACCOUNT_EMAIL,
  META_TWIN_DEV_ACCOUNT,
} from '../../scripts/stack/provider-twins';
import { useTestDatabase } from '../support/database';

const { db } = await useTestDatabase();
const k1 = newKeyringEntry('k1');
const k2 = newKeyringEntry('k2');
const ringK1 = keyringSchema.parse(k1);
const ringK2 = keyringSchema.parse(k2);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'provider-twins-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The dev account with a number of its own (a number connected in another workspace of the test database is refused). */
const accountOfOwnNumber = () => ({
  ...META_TWIN_DEV_ACCOUNT,
  phoneNumbers: [{ id: '100000000000002', displayPhoneNumber: `+1 415-555-${String(randomInt(1000, 10_000))}` }],
});

describe("npm start's provider twin connections (scripts/stack/provider-twins.ts)", () => {
  it('makes the meta-twin connection and its bound sender once, follows the base URL and reseals the token under a new ring', async () => {
    const { id: workspaceId } = await createWorkspace(db, 'Dev twins (Meta)', {});
    const account = accountOfOwnNumber();
    const first = await ensureMetaTwinConnection(db, ringK1, workspaceId, 'http://127.0.0.1:3200', account);
    expect(first.connection).toMatchObject({
      provider: 'meta-twin',
      phoneNumberId: account.phoneNumbers[0]!.id,
      businessAccountId: account.businessAccountId,
      baseUrl: 'http://127.0.0.1:3200',
      keyId: 'k1',
    });
    expect(await openWhatsAppConnection(db, ringK1, first.connection.id)).toMatchObject({
      accessToken: account.accessToken,
      baseUrl: 'http://127.0.0.1:3200',
    });
    const sender = await db.whatsAppSender.findUniqueOrThrow({ where: { id: first.senderId } });
    expect(sender).toMatchObject({
      e164: first.e164,
      status: 'CONNECTED',
      provider: 'meta-twin',
      connectionId: first.connection.id,
      phoneNumberId: account.phoneNumbers[0]!.id,
      businessAccountId: account.businessAccountId,
    });

    const kept = await ensureMetaTwinConnection(db, ringK1, workspaceId, 'http://127.0.0.1:3200', account);
    expect(kept).toEqual(first);

    // Another port and a development key ring made anew: the same connection and sender, the token sealed again.
    const moved = await ensureMetaTwinConnection(db, ringK2, workspaceId, 'http://127.0.0.1:3999', account);
    expect(moved.connection).toMatchObject({ id: first.connection.id, baseUrl: 'http://127.0.0.1:3999', keyId: 'k2' });
    expect(moved.connection.rotatedAt).not.toBeNull();
    expect(moved.senderId).toBe(first.senderId);
    expect((await openWhatsAppConnection(db, ringK2, first.connection.id))?.accessToken).toBe(account.accessToken);
    expect(await db.whatsAppConnection.count({ where: { workspaceId } })).toBe(1);
    expect(await db.whatsAppSender.count({ where: { workspaceId } })).toBe(1);
  });

  it('keeps the development service account key across starts and the google-twin connection once, resealed when the key differs', async () => {
    const { id: workspaceId } = await createWorkspace(db, 'Dev twins (Google)', {});
    const keyPath = path.join(tmp, 'google-twin-dev-key.pem');
    const key = ensureGoogleTwinDevKey('http://127.0.0.1:3700', keyPath);
    expect(ensureGoogleTwinDevKey('http://127.0.0.1:3700', keyPath)).toEqual(key);
    expect(JSON.parse(key.keyJson)).toMatchObject({
      type: 'service_account',
      client_email: GOOGLE_TWIN_DEV_ACCOUNT_EMAIL,
      token_uri: 'http://127.0.0.1:3700/token',
    });
    expect(key.account.publicKeyPem).toContain('BEGIN PUBLIC KEY');
    expect(JSON.stringify(key.account)).not.toContain('PRIVATE');

    const first = await ensureGoogleTwinConnection(db, ringK1, workspaceId, 'http://127.0.0.1:3700/', key.keyJson);
    expect(first).toMatchObject({
      provider: 'google-twin',
      serviceAccountEmail: GOOGLE_TWIN_DEV_ACCOUNT_EMAIL,
      baseUrl: 'http://127.0.0.1:3700/',
      keyId: 'k1',
      rotatedAt: null,
    });
    expect(await ensureGoogleTwinConnection(db, ringK1, workspaceId, 'http://127.0.0.1:3700/', key.keyJson)).toEqual(
      first,
    );

    // The key file lost: a new key, the same connection with it sealed.
    rmSync(keyPath);
    const other = ensureGoogleTwinDevKey('http://127.0.0.1:3700', keyPath);
    expect(other.keyJson).not.toBe(key.keyJson);
    const resealed = await ensureGoogleTwinConnection(db, ringK2, workspaceId, 'http://127.0.0.1:3701/', other.keyJson);
    expect(resealed).toMatchObject({ id: first.id, baseUrl: 'http://127.0.0.1:3701/', keyId: 'k2' });
    expect(resealed.rotatedAt).not.toBeNull();
    expect(await db.sheetConnection.count({ where: { workspaceId } })).toBe(1);
  });

  it('makes the store connection once and sets its shopify-twin Admin API token only when it differs', async () => {
    const { id: workspaceId } = await createWorkspace(db, 'Dev twins (store)', {});
    const shop = {
      shopDomain: `dev-twins-${randomInt(1e9)}.myshopify.com`,
      accessToken: 'shpat_store_twin_development',
    };
    const first = await ensureShopifyTwinConnection(db, ringK1, workspaceId, 'http://127.0.0.1:3600', shop);
    expect(first).toMatchObject({ shopDomain: shop.shopDomain, tokenSet: true });
    expect(await openCrmAdminConnection(db, ringK1, first.id)).toEqual({
      connectionId: first.id,
      shopDomain: shop.shopDomain,
      provider: 'shopify-twin',
      baseUrl: 'http://127.0.0.1:3600',
      accessToken: shop.accessToken,
    });
    expect(await ensureShopifyTwinConnection(db, ringK1, workspaceId, 'http://127.0.0.1:3600', shop)).toEqual({
      ...first,
      tokenSet: false,
    });
    const resealed = await ensureShopifyTwinConnection(db, ringK2, workspaceId, 'http://127.0.0.1:3601', shop);
    expect(resealed).toEqual({ ...first, tokenSet: true });
    expect(await openCrmAdminConnection(db, ringK2, first.id)).toMatchObject({
      baseUrl: 'http://127.0.0.1:3601',
      accessToken: shop.accessToken,
    });
    expect(await db.crmConnection.count({ where: { workspaceId } })).toBe(1);
  });
});
