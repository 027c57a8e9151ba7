import type { Database } from '../database';
import type { Keyring } from '../secrets/keyring';
import { openCarrierConnection, type OpenedCarrierConnection } from './connections';

/**
 * How long a process keeps a carrier connection it opened before reading it again. Every dial, status callback, TwiML
 * request and webhook needs its connection; at a few hundred a second a read each was the largest cost the carrier
 * path added (docs/benchmarks/twilio-path.md).
 */
export const OPENED_CONNECTION_TTL_MS = 5_000;

/** Connections kept at most; past it the kept ones are dropped (a process of a few thousand workspaces stays below). */
const MAX_KEPT = 10_000;

export interface KeptConnection {
  connection: OpenedCarrierConnection | null;
  /** Read from the database for this request (not kept from an earlier one): reading again would tell nothing new. */
  fresh: boolean;
}

/**
 * The live carrier connections one process uses, opened (their secrets decrypted), each kept for
 * OPENED_CONNECTION_TTL_MS after it was read. What that allows, and why it is safe (docs/features/carriers/connections.md#what-a-process-keeps):
 * - a rotation: a request the kept secrets refuse (a signature by the new auth token or key) reads the connection
 *   again at once (`reread`), so the new secret is never refused; the old one is still accepted for up to the TTL, as
 *   carriers themselves keep a rotated secret valid for a while;
 * - a removal: a new call is never placed through a removed connection, as taking a line reads its liveness in the
 *   same statement (lib/calls/call-lines.ts); its callbacks are taken for up to the TTL after the removal.
 * Concurrent reads of one connection are one read. Unknown and removed connections are not kept: each asks again.
 */
export function createOpenedConnections(
  db: Database,
  keyring: Keyring,
  { ttlMs = OPENED_CONNECTION_TTL_MS, now = () => Date.now() }: { ttlMs?: number; now?: () => number } = {},
) {
  const kept = new Map<string, { readAt: number; opened: Promise<OpenedCarrierConnection | null> }>();

  const read = (id: string): Promise<OpenedCarrierConnection | null> => {
    const opened = openCarrierConnection(db, keyring, id);
    if (kept.size >= MAX_KEPT) kept.clear();
    const entry = { readAt: now(), opened };
    kept.set(id, entry);
    // Not kept when unknown or removed, nor when the read failed: the next request reads again.
    opened.then(
      (connection) => connection === null && kept.get(id) === entry && kept.delete(id),
      () => kept.get(id) === entry && kept.delete(id),
    );
    return opened;
  };

  return {
    /** The connection, as read within the TTL, or read now. */
    async get(id: string): Promise<KeptConnection> {
      const entry = kept.get(id);
      if (entry && now() - entry.readAt < ttlMs) return { connection: await entry.opened, fresh: false };
      return { connection: await read(id), fresh: true };
    },
    /** The connection read now: a request the kept one refused, which a rotation since may explain. */
    reread: read,
  };
}

export type OpenedConnections = ReturnType<typeof createOpenedConnections>;

/** One set of opened connections per database and key ring (the API's and the worker's processes each have one). */
const perDatabase = new WeakMap<Database, WeakMap<Keyring, OpenedConnections>>();

export function openedConnectionsOf(db: Database, keyring: Keyring): OpenedConnections {
  let byKeyring = perDatabase.get(db);
  if (!byKeyring) perDatabase.set(db, (byKeyring = new WeakMap()));
  let opened = byKeyring.get(keyring);
  if (!opened) byKeyring.set(keyring, (opened = createOpenedConnections(db, keyring)));
  return opened;
}

/**
 * The connection a carrier's request names, verified by `signedBy` with its secrets: kept within the TTL, read again
 * once when the kept secrets refuse it. Null: unknown, removed, or the signature is not the connection's.
 */
export async function verifiedConnection(
  opened: OpenedConnections,
  id: string,
  signedBy: (connection: OpenedCarrierConnection) => boolean | Promise<boolean>,
): Promise<OpenedCarrierConnection | null> {
  const { connection, fresh } = await opened.get(id);
  if (connection && (await signedBy(connection))) return connection;
  if (fresh) return null;
  const again = await opened.reread(id);
  return again && (await signedBy(again)) ? again : null;
}
