import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Database } from '../database';
import { ConfigError } from '../config-error';
import { baseUrlSchema } from '../http/base-url';
import { ConflictError, NotFoundError } from '../operator-refusals';
import { ErrorCode } from '../error-codes';
import { Refusal } from '../refusal';
import { boundAdditionalData, rowOnlyAdditionalData } from '../secrets/binding';
import { EnvelopeError, seal, type Envelope } from '../secrets/envelope';
import { openSealedRow, rekeyRows, type RekeyReport, type SealedRowKind } from '../secrets/sealed-rows';
import type { Keyring } from '../secrets/keyring';
import {
  connectionOfNumber,
  connectionsNotUnder,
  envelopeOf,
  insertCarrierConnection,
  liveCarrierConnections,
  liveConnectionByLabel,
  liveConnection,
  lockLiveCarrierConnection,
  markRemoved,
  numbersBoundTo,
  replaceEnvelope,
  updateBaseUrl,
  type CarrierConnectionRow,
} from './carrier-store';
import { realBaseUrlRefusal } from '../provider-base-urls';

/**
 * Carrier accounts connected to a workspace (docs/features/carriers.md). A twin provider speaks its carrier's
 * protocol from a local process: its calls are recorded under the twin's name and never pass for real ones.
 */
export const CARRIER_PROVIDERS = ['twilio', 'telnyx', 'twilio-twin', 'telnyx-twin'] as const;
export type CarrierProvider = (typeof CARRIER_PROVIDERS)[number];
export type CarrierFamily = 'twilio' | 'telnyx';
export const familyOf = (provider: CarrierProvider): CarrierFamily =>
  provider === 'twilio' || provider === 'twilio-twin' ? 'twilio' : 'telnyx';

/** The carriers' public API addresses; a twin has none and must be given its base URL. */
export const DEFAULT_BASE_URLS: Readonly<Partial<Record<CarrierProvider, string>>> = {
  twilio: 'https://api.twilio.com',
  telnyx: 'https://api.telnyx.com/v2',
};

/** Twilio's account SID: AC and 32 hexadecimal digits. */
export const twilioAccountSidSchema = z
  .string()
  .trim()
  .regex(/^AC[0-9a-fA-F]{32}$/, 'must be AC followed by 32 hexadecimal digits');
/** Twilio's API key SID: SK and 32 hexadecimal digits. */
export const twilioApiKeySidSchema = z
  .string()
  .trim()
  .regex(/^SK[0-9a-fA-F]{32}$/, 'must be SK followed by 32 hexadecimal digits');
/** A token, key or secret as issued: printable, without spaces. The message never repeats the value. */
export const carrierSecretSchema = z
  .string()
  .trim()
  .regex(/^[\x21-\x7e]{8,512}$/, 'must be 8 to 512 printable characters without spaces');
/** Telnyx's webhook signing key: an Ed25519 public key, 32 bytes in base64, as the portal shows it. */
export const telnyxPublicKeySchema = z
  .string()
  .trim()
  .refine(
    (value) => /^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === 32,
    'must be an Ed25519 public key: 32 bytes in base64',
  );
/** Telnyx's connection or application id (a number as text today; its letters are allowed). */
export const telnyxConnectionIdSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be 1 to 128 of A-Z a-z 0-9 _ -');
export const carrierBaseUrlSchema = baseUrlSchema;

/**
 * The sealed material. Twilio: the auth token; or the API key's secret, which places the calls, with the account's auth
 * token, which only checks the callbacks' signatures (Twilio signs them with the auth token, never with an API key; a
 * connection made before the token was asked for may lack it). Telnyx: the API key and the webhook key.
 */
export type TwilioSecrets = { authToken: string } | { apiKeySecret: string; authToken?: string };
export type TelnyxSecrets = { apiKey: string; publicKey: string };

/** What the operator gives: the identifiers in clear and the secrets, by carrier family. */
export type CarrierAccount =
  | { family: 'twilio'; accountSid: string; apiKeySid?: string; secrets: TwilioSecrets }
  | { family: 'telnyx'; connectionId: string; secrets: TelnyxSecrets };

export interface CarrierConnectRequest {
  workspaceId: string;
  provider: CarrierProvider;
  label?: string;
  baseUrl?: string;
  account: CarrierAccount;
}

/** A connection as it may be shown: never a secret, not even a part of one. */
export type CarrierConnectionView = {
  id: string;
  workspaceId: string;
  provider: CarrierProvider;
  label: string;
  accountSid: string | null;
  apiKeySid: string | null;
  /**
   * Twilio: whether the connection holds the account's auth token, which its callbacks are verified with (never the
   * token itself). False (an API key connection made before the token was asked for): every callback is refused, 401,
   * until `carrier rotate --auth-token` sets it. Telnyx: null.
   */
  authTokenSet: boolean | null;
  connectionId: string | null;
  /** The stored override; null: the provider's public API. */
  baseUrl: string | null;
  /** Which key of SECRETS_KEYS seals it (to see what `carrier rekey` has left to move). */
  keyId: string | null;
  createdAt: string;
  rotatedAt: string | null;
};

/** A connection opened for an adapter: where to send requests, the identifiers and the secrets in clear. */
export type OpenedCarrierConnection = {
  id: string;
  workspaceId: string;
  label: string;
  /** The stored override or the provider's public API. */
  baseUrl: string;
} & (
  | { provider: 'twilio' | 'twilio-twin'; accountSid: string; apiKeySid: string | null; secrets: TwilioSecrets }
  | { provider: 'telnyx' | 'telnyx-twin'; connectionId: string; secrets: TelnyxSecrets }
);

/**
 * The additional data an envelope is sealed with (lib/secrets/binding.ts): the row, its workspace, its provider and its
 * base URL. An envelope copied to another connection, or left on a row whose provider or base URL was changed in the
 * table, fails authentication; ensureCarrierConnection, which changes the base URL, seals again.
 */
const additionalDataOf = (row: { workspaceId: string; id: string; provider: string; baseUrl: string | null }) =>
  boundAdditionalData({ kind: 'carrier-connection', ...row, address: row.baseUrl });
/** What rows were sealed with before their binding (until `secrets rekey` moves them). */
const legacyAdditionalDataOf = (row: { workspaceId: string; id: string }) =>
  rowOnlyAdditionalData('carrier-connection', row);

/** The key ring from the configuration, or the refusal naming the variable that is missing. */
export function requireKeyring(keyring: Keyring | undefined): Keyring {
  if (!keyring)
    throw new ConfigError(
      'config: SECRETS_KEYS is required but not set (carrier connections are sealed with it; docs/features/carriers/connections.md#the-key-ring)',
    );
  return keyring;
}

function checkAccount(provider: CarrierProvider, account: CarrierAccount, baseUrl: string | undefined): void {
  if (familyOf(provider) !== account.family)
    throw new ConflictError(`a ${provider} connection takes ${familyOf(provider)} credentials, not ${account.family}`);
  if (!DEFAULT_BASE_URLS[provider] && !baseUrl)
    throw new ConflictError(`a ${provider} connection needs the base URL of its twin`);
  checkRealBaseUrl(provider, baseUrl);
  if (account.family === 'twilio' && !!account.apiKeySid !== 'apiKeySecret' in account.secrets)
    throw new ConflictError('a Twilio API key SID goes with its secret, an auth token without one');
  if (account.family === 'twilio' && !account.secrets.authToken)
    throw new ConflictError(
      "a Twilio connection needs the account's auth token, with an API key pair too: Twilio signs its callbacks with it, and a callback that cannot be verified is refused",
    );
}

/** A real carrier's base URL is https on its own hosts (lib/provider-base-urls.ts); a twin's is any http(s) URL. */
function checkRealBaseUrl(provider: CarrierProvider, baseUrl: string | null | undefined): void {
  if (!baseUrl || (provider !== 'twilio' && provider !== 'telnyx')) return;
  const refusal = realBaseUrlRefusal(provider, baseUrl);
  if (refusal) throw new ConflictError(refusal);
}

/** Whether Twilio secrets hold the auth token (the column that lets `carrier list` say so without opening them). */
const authTokenSetOf = (secrets: TwilioSecrets | TelnyxSecrets): boolean =>
  'authToken' in secrets && typeof secrets.authToken === 'string';

/**
 * Connects a carrier account to a workspace: its identifiers stored in clear, its secrets sealed under the
 * ring's current key, bound to this row. Answers the connection as it may be shown.
 */
export async function connectCarrier(
  db: Database,
  keyring: Keyring,
  request: CarrierConnectRequest,
): Promise<CarrierConnectionView> {
  const { workspaceId, provider, account, baseUrl } = request;
  checkAccount(provider, account, baseUrl);
  const workspace = await db.workspace.findFirst({ where: { id: workspaceId, deletedAt: null }, select: { id: true } });
  if (!workspace) throw new NotFoundError(`workspace ${workspaceId} not found`);
  // The id is chosen here: the envelope is bound to it before the row exists.
  const id = randomUUID();
  const created = await insertCarrierConnection(db, {
    id,
    workspaceId,
    provider,
    label: request.label ?? provider,
    accountSid: account.family === 'twilio' ? account.accountSid : null,
    apiKeySid: account.family === 'twilio' ? (account.apiKeySid ?? null) : null,
    connectionRef: account.family === 'telnyx' ? account.connectionId : null,
    baseUrl: baseUrl ?? null,
    authTokenSet: authTokenSetOf(account.secrets),
    envelope: seal(
      keyring,
      JSON.stringify(account.secrets),
      additionalDataOf({ workspaceId, id, provider, baseUrl: baseUrl ?? null }),
    ),
  });
  return viewOf(created);
}

export function viewOf(row: CarrierConnectionRow): CarrierConnectionView {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    provider: row.provider as CarrierProvider,
    label: row.label,
    accountSid: row.accountSid,
    apiKeySid: row.apiKeySid,
    authTokenSet: familyOf(row.provider as CarrierProvider) === 'twilio' ? row.authTokenSet : null,
    connectionId: row.connectionRef,
    baseUrl: row.baseUrl,
    keyId: row.secretKeyId,
    createdAt: row.createdAt.toISOString(),
    rotatedAt: row.rotatedAt?.toISOString() ?? null,
  };
}

export async function listCarrierConnections(db: Database, workspaceId: string): Promise<CarrierConnectionView[]> {
  return (await liveCarrierConnections(db, workspaceId)).map(viewOf);
}

/**
 * Secrets opened before, by connection and envelope: every carrier request and callback opens its connection, and an
 * envelope's nonce is new at each sealing, so a rotated or re-keyed connection is opened afresh and a removed one is
 * never read (the row must still be live to be found). Held in this process's memory only, as opened secrets are
 * while they are used; bounded, and emptied when full.
 */
const openedSecrets = new WeakMap<Keyring, Map<string, TwilioSecrets | TelnyxSecrets>>();
const OPENED_SECRETS_MAX = 1000;

function secretsOf(keyring: Keyring, row: CarrierConnectionRow, envelope: Envelope): TwilioSecrets | TelnyxSecrets {
  // By ring: what one ring opens, another (without the key that sealed it) must fail to.
  let opened = openedSecrets.get(keyring);
  if (!opened) openedSecrets.set(keyring, (opened = new Map<string, TwilioSecrets | TelnyxSecrets>()));
  // By binding too: a row whose base URL was changed in the table is opened (and refused) afresh.
  const key = `${additionalDataOf(row)}:${row.secretKeyId}:${row.secretNonce}:${row.secretCiphertext}`;
  const known = opened.get(key);
  if (known) return known;
  const secrets = JSON.parse(openSealedRow(keyring, carrierConnectionRows, row, envelope)) as
    TwilioSecrets | TelnyxSecrets;
  if (opened.size >= OPENED_SECRETS_MAX) opened.clear();
  opened.set(key, secrets);
  return secrets;
}

function openRow(keyring: Keyring, row: CarrierConnectionRow): OpenedCarrierConnection {
  const envelope = envelopeOf(row);
  // A live row always holds its envelope (only removal wipes it): a missing one is a damaged row.
  if (!envelope) throw new Error(`carrier connection ${row.id} holds no secret material`);
  const secrets = secretsOf(keyring, row, envelope);
  const provider = row.provider as CarrierProvider;
  const common = { id: row.id, workspaceId: row.workspaceId, label: row.label };
  const baseUrl = row.baseUrl ?? DEFAULT_BASE_URLS[provider]!;
  return familyOf(provider) === 'twilio'
    ? {
        ...common,
        baseUrl,
        provider: provider as 'twilio' | 'twilio-twin',
        accountSid: row.accountSid!,
        apiKeySid: row.apiKeySid,
        secrets: secrets as TwilioSecrets,
      }
    : {
        ...common,
        baseUrl,
        provider: provider as 'telnyx' | 'telnyx-twin',
        connectionId: row.connectionRef!,
        secrets: secrets as TelnyxSecrets,
      };
}

/**
 * What a call from the workspace's number goes through (the carrier adapters): the number's live connection,
 * opened. Refused with no_carrier_connection when the number is not the workspace's or is bound to none.
 */
export async function carrierConnectionForCaller(
  db: Database,
  keyring: Keyring,
  caller: { workspaceId: string; e164: string },
): Promise<OpenedCarrierConnection> {
  const row = await connectionOfNumber(db, caller.workspaceId, caller.e164);
  if (!row)
    throw new Refusal(ErrorCode.no_carrier_connection, {
      e164: caller.e164,
      detail: 'the number is not bound to a carrier connection of this workspace (number assign --carrier-connection)',
    });
  return openRow(keyring, row);
}

/**
 * A live connection by id, opened: what a call recorded on it (Call.carrierConnectionId) is placed, looked up and hung
 * up through, and what its callbacks are checked with. Null when unknown or removed (a removed one's secrets are gone).
 * Processes keep what they open for a few seconds (lib/carrier-connections/opened-connections.ts).
 */
export async function openCarrierConnection(
  db: Database,
  keyring: Keyring,
  id: string,
): Promise<OpenedCarrierConnection | null> {
  const row = await liveConnection(db, id);
  return row && openRow(keyring, row);
}

/** New secret material: Twilio's token or key secret; Telnyx's API key and/or webhook key (the other kept). */
export type SecretsUpdate = Partial<{ authToken: string; apiKeySecret: string; apiKey: string; publicKey: string }>;

function rotatedSecrets(
  row: CarrierConnectionRow,
  current: TwilioSecrets | TelnyxSecrets,
  update: SecretsUpdate,
): TwilioSecrets | TelnyxSecrets {
  const given = Object.entries(update).filter(([, value]) => value !== undefined);
  if (given.length === 0) throw new ConflictError('nothing to rotate: give the new secret');
  const expected =
    familyOf(row.provider as CarrierProvider) === 'telnyx'
      ? ['apiKey', 'publicKey']
      : row.apiKeySid
        ? ['apiKeySecret', 'authToken']
        : ['authToken'];
  const stray = given.find(([name]) => !expected.includes(name));
  if (stray)
    throw new ConflictError(
      `connection ${row.id} (${row.provider}${row.apiKeySid ? ', API key' : ''}) takes ${expected.join(' or ')}, not ${stray[0]}`,
    );
  return { ...current, ...Object.fromEntries(given) } as TwilioSecrets | TelnyxSecrets;
}

/** Replaces a live connection's secret material, sealed afresh under the current key; rotatedAt set. */
export async function rotateCarrierSecrets(
  db: Database,
  keyring: Keyring,
  connectionId: string,
  update: SecretsUpdate,
): Promise<CarrierConnectionView> {
  return db.$transaction(async (tx) => {
    const row = await lockLiveCarrierConnection(tx, connectionId, 'update');
    if (!row) throw new NotFoundError(`no live carrier connection has id ${connectionId}`);
    const secrets = rotatedSecrets(row, openRow(keyring, row).secrets, update);
    const envelope = seal(keyring, JSON.stringify(secrets), additionalDataOf(row));
    const rotatedAt = new Date();
    const authTokenSet = authTokenSetOf(secrets);
    await replaceEnvelope(tx, row.id, envelope, rotatedAt, authTokenSet);
    return viewOf({ ...row, secretKeyId: envelope.keyId, rotatedAt, authTokenSet });
  });
}

/** `carrier rekey`: every live connection's envelope moved to the ring's current key (lib/secrets/sealed-rows.ts). */
export const carrierConnectionRows: SealedRowKind<CarrierConnectionRow> = {
  idsNotUnder: connectionsNotUnder,
  lockLive: (tx, id) => lockLiveCarrierConnection(tx, id, 'update'),
  additionalDataOf,
  legacyAdditionalDataOf,
  replaceEnvelope: (tx, id, envelope) => replaceEnvelope(tx, id, envelope),
};

export const rekeyCarrierConnections = (db: Database, keyring: Keyring): Promise<RekeyReport> =>
  rekeyRows(db, keyring, carrierConnectionRows);

/**
 * Connects, once, the account `request` describes under its label (the development twin of `npm start`): the
 * workspace's live connection of that provider and label is kept, its base URL brought up to date, and its
 * secrets sealed again when they differ, no longer open (the development key ring made anew), or the base URL moved
 * (the envelope is bound to it), in the same transaction.
 */
export async function ensureCarrierConnection(
  db: Database,
  keyring: Keyring,
  request: CarrierConnectRequest & { label: string },
): Promise<CarrierConnectionView> {
  const existing = await liveConnectionByLabel(db, request.workspaceId, request.provider, request.label);
  if (!existing) return connectCarrier(db, keyring, request);
  const wanted = JSON.stringify(request.account.secrets);
  return db.$transaction(async (tx) => {
    const row = (await lockLiveCarrierConnection(tx, existing.id, 'update'))!;
    const baseUrl = request.baseUrl ?? null;
    checkRealBaseUrl(request.provider, baseUrl);
    let current: string | null = null;
    try {
      current = JSON.stringify(openRow(keyring, row).secrets);
    } catch (error) {
      if (!(error instanceof EnvelopeError)) throw error;
    }
    const moved = row.baseUrl !== baseUrl;
    if (moved) await updateBaseUrl(tx, row.id, baseUrl);
    if (current === wanted && !moved) return viewOf(row);
    const envelope = seal(keyring, wanted, additionalDataOf({ ...row, baseUrl }));
    // Only new secrets are a rotation; the same ones sealed again for the moved base URL are not.
    const rotatedAt = current !== wanted ? new Date() : undefined;
    const authTokenSet = rotatedAt && authTokenSetOf(request.account.secrets);
    await replaceEnvelope(tx, row.id, envelope, rotatedAt, authTokenSet);
    return viewOf({
      ...row,
      baseUrl,
      secretKeyId: envelope.keyId,
      rotatedAt: rotatedAt ?? row.rotatedAt,
      authTokenSet: authTokenSet ?? row.authTokenSet,
    });
  });
}

/**
 * Removes a connection: soft-deleted (calls keep their reference) and its secrets wiped. Refused while a
 * number is bound to it: rebind those (number assign --carrier-connection) or release them first, so no
 * number is left silently unable to call.
 */
export async function removeCarrierConnection(db: Database, connectionId: string): Promise<{ id: string }> {
  return db.$transaction(async (tx) => {
    const row = await lockLiveCarrierConnection(tx, connectionId, 'update');
    if (!row) throw new NotFoundError(`no live carrier connection has id ${connectionId}`);
    const bound = await numbersBoundTo(tx, row.id);
    if (bound.length > 0)
      throw new ConflictError(
        `carrier connection ${row.id} is in use by ${bound.join(', ')}; bind them to another connection (number assign --carrier-connection) or release them first`,
      );
    await markRemoved(tx, row.id);
    return { id: row.id };
  });
}
