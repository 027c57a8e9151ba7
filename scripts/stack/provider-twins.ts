import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { crmAdminTokenRows, setCrmAdminToken } from '../../lib/crm/admin-token';
import { connectCrm } from '../../lib/crm/connections';
import type { Database } from '../../lib/database';
import {
  connectSheets,
  rotateSheetKey,
  sheetConnectionRows,
  sheetConnectionView,
  type SheetConnectionView,
} from '../../lib/sheets/connections';
import { parseServiceAccountKey } from '../../lib/sheets/service-account-key';
import { EnvelopeError } from '../../lib/secrets/envelope';
import type { Keyring } from '../../lib/secrets/keyring';
import {
  envelopeFromColumns,
  openSealedRow,
  type EnvelopeColumns,
  type SealedRowKind,
} from '../../lib/secrets/sealed-rows';
import {
  connectWhatsApp,
  listWhatsAppConnections,
  rotateWhatsAppToken,
  whatsappConnectionRows,
  type WhatsAppConnectionView,
} from '../../lib/whatsapp/connections';
import { connectWhatsAppSender } from '../../lib/whatsapp/senders';
import { devGoogleTwinKeyPath } from './paths';

/*
 * What `npm start` gives the development workspace of the provider twins of issue 31 (docs/operations.md#run-it), as
 * lib/carriers/twin.ts does for the carrier twins: each connection made once (found again by its provider and label),
 * its base URL brought up to date and its secret resealed when it differs from the one wanted or the base URL moved (the
 * envelope is bound to it: lib/secrets/binding.ts); kept otherwise.
 */

/**
 * The development account of Meta's twin (META_TWIN_ACCOUNTS): fake and public like the carrier twins' credentials; the
 * twin accepts the token, Meta never would. Its one number is the development workspace's WhatsApp sender.
 */
export const META_TWIN_DEV_ACCOUNT = {
  accessToken: 'EAAmetatwin-development-token-not-a-real-secret',
  businessAccountId: '100000000000001',
  phoneNumbers: [{ id: '100000000000002', displayPhoneNumber: '+1 415-555-0199' }],
};
export const META_TWIN_DEV_SENDER = '+14155550199';
export const META_TWIN_LABEL = 'Development Meta twin';

/** The development service account of the Google Sheets twin: its key is made on the first start and kept in .data. */
export const GOOGLE_TWIN_DEV_ACCOUNT_EMAIL = 'dev-sheets@workspace-dev.iam.gserviceaccount.com';
export const GOOGLE_TWIN_LABEL = 'Development Google Sheets twin';

/** The store connection of the store twin's development shop (its webhook signing secret is as fake as the rest). */
export const SHOPIFY_TWIN_WEBHOOK_SECRET = 'store-twin-webhook-secret-not-a-real-secret';

/** The secret a sealed row holds, opened; null when it holds none or the ring cannot open it (then it is resealed). */
function currentSecret<Row extends EnvelopeColumns & { id: string }>(
  keyring: Keyring,
  kind: SealedRowKind<Row>,
  row: Row,
): string | null {
  const envelope = envelopeFromColumns(row);
  if (!envelope) return null;
  try {
    return openSealedRow(keyring, kind, row, envelope);
  } catch (error) {
    if (error instanceof EnvelopeError) return null;
    throw error;
  }
}

/**
 * The workspace's `meta-twin` WhatsApp connection to the twin at `baseUrl` for `account`'s first number, and that
 * number connected as a sender bound to it (a sender of the number already there is re-bound, not duplicated).
 */
export async function ensureMetaTwinConnection(
  db: Database,
  keyring: Keyring,
  workspaceId: string,
  baseUrl: string,
  account: typeof META_TWIN_DEV_ACCOUNT,
): Promise<{ connection: WhatsAppConnectionView; senderId: string; e164: string }> {
  const number = account.phoneNumbers[0]!;
  const ids = {
    phoneNumberId: number.id,
    businessAccountId: account.businessAccountId,
    displayPhoneNumber: number.displayPhoneNumber,
    baseUrl,
  };
  const existing = await db.whatsAppConnection.findFirst({
    where: { workspaceId, provider: 'meta-twin', label: META_TWIN_LABEL, deletedAt: null },
    orderBy: { createdAt: 'asc' },
  });
  let connection: WhatsAppConnectionView;
  if (!existing) {
    connection = await connectWhatsApp(db, keyring, {
      workspaceId,
      provider: 'meta-twin',
      label: META_TWIN_LABEL,
      ...ids,
      accessToken: account.accessToken,
    });
  } else {
    const changed = (Object.keys(ids) as Array<keyof typeof ids>).some((name) => existing[name] !== ids[name]);
    // Opened before the base URL moves: the envelope is bound to the one it was sealed for.
    const current = currentSecret(keyring, whatsappConnectionRows, existing);
    const token = current === null ? null : (JSON.parse(current) as { accessToken?: string }).accessToken;
    if (changed) await db.whatsAppConnection.update({ where: { id: existing.id }, data: ids });
    connection =
      token === account.accessToken && existing.baseUrl === baseUrl
        ? (await listWhatsAppConnections(db, workspaceId)).find((live) => live.id === existing.id)!
        : await rotateWhatsAppToken(db, keyring, existing.id, account.accessToken);
  }
  const e164 = `+${number.displayPhoneNumber.replace(/\D/g, '')}`;
  const { id: senderId } = await connectWhatsAppSender(db, {
    workspaceId,
    e164,
    provider: 'meta-twin',
    connectionId: connection.id,
  });
  return { connection, senderId, e164 };
}

/**
 * The development service account's key: an RSA key made on the first start and kept (mode 600) beside the dev key
 * ring, never a key Google issued. Answers its JSON (token_uri: the twin's token endpoint) and the public half the
 * twin is given (GOOGLE_TWIN_ACCOUNTS).
 */
export function ensureGoogleTwinDevKey(twinUrl: string, keyPath = devGoogleTwinKeyPath) {
  let privateKeyPem = existsSync(keyPath) ? readFileSync(keyPath, 'utf8') : '';
  if (!privateKeyPem.includes('PRIVATE KEY')) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    writeFileSync(keyPath, privateKeyPem, { mode: 0o600 });
  }
  const publicKeyPem = createPublicKey(createPrivateKey(privateKeyPem))
    .export({ type: 'spki', format: 'pem' })
    .toString();
  const keyJson = JSON.stringify({
    type: 'service_account',
    project_id: 'workspace-dev',
    private_key_id: createHash('sha1').update(publicKeyPem).digest('hex'),
    private_key: privateKeyPem,
    client_email: GOOGLE_TWIN_DEV_ACCOUNT_EMAIL,
    token_uri: `${twinUrl}/token`,
  });
  return { keyJson, account: { clientEmail: GOOGLE_TWIN_DEV_ACCOUNT_EMAIL, publicKeyPem } };
}

/** The workspace's `google-twin` sheets connection to the twin at `rootUrl` (ending in /), with the key `keyJson`. */
export async function ensureGoogleTwinConnection(
  db: Database,
  keyring: Keyring,
  workspaceId: string,
  rootUrl: string,
  keyJson: string,
): Promise<SheetConnectionView> {
  const existing = await db.sheetConnection.findFirst({
    where: { workspaceId, provider: 'google-twin', label: GOOGLE_TWIN_LABEL, deletedAt: null },
    orderBy: { createdAt: 'asc' },
  });
  if (!existing)
    return connectSheets(db, keyring, {
      workspaceId,
      provider: 'google-twin',
      label: GOOGLE_TWIN_LABEL,
      baseUrl: rootUrl,
      keyJson,
    });
  // Opened before the base URL moves (the envelope is bound to it); a moved one is sealed again (rotateSheetKey).
  const current = currentSecret(keyring, sheetConnectionRows, existing);
  if (existing.baseUrl !== rootUrl)
    await db.sheetConnection.update({ where: { id: existing.id }, data: { baseUrl: rootUrl } });
  else if (current === JSON.stringify(parseServiceAccountKey(keyJson))) return sheetConnectionView(existing);
  return rotateSheetKey(db, keyring, existing.id, keyJson);
}

/**
 * The workspace's store connection to `shop` (a shop the store twin knows) carrying its `shopify-twin` Admin API token
 * and the twin's base URL: the connection made once, the token set again only when it, its provider or URL differ.
 */
export async function ensureShopifyTwinConnection(
  db: Database,
  keyring: Keyring,
  workspaceId: string,
  baseUrl: string,
  shop: { shopDomain: string; accessToken: string },
): Promise<{ id: string; shopDomain: string; tokenSet: boolean }> {
  const live = await db.crmConnection.findFirst({
    where: { workspaceId, kind: 'shopify', shopDomain: shop.shopDomain, deletedAt: null },
    select: { id: true },
  });
  const { id } =
    live ??
    (await connectCrm(db, keyring, {
      workspaceId,
      kind: 'shopify',
      shopDomain: shop.shopDomain,
      secret: SHOPIFY_TWIN_WEBHOOK_SECRET,
    }));
  const row = (await db.$transaction((tx) => crmAdminTokenRows.lockLive(tx, id)))!;
  const current = currentSecret(keyring, crmAdminTokenRows, row);
  const kept = current === shop.accessToken && row.adminProvider === 'shopify-twin' && row.adminBaseUrl === baseUrl;
  if (!kept)
    await setCrmAdminToken(db, keyring, {
      connectionId: id,
      token: shop.accessToken,
      provider: 'shopify-twin',
      baseUrl,
    });
  return { id, shopDomain: shop.shopDomain, tokenSet: !kept };
}
