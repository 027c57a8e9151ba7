import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  connectCarrier,
  removeCarrierConnection,
  rotateCarrierSecrets,
} from '../../lib/carrier-connections/connections';
import { createOpenedConnections, verifiedConnection } from '../../lib/carrier-connections/opened-connections';
import { createWorkspace } from '../../lib/door/workspace-admin';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { useTestDatabase } from '../support/database';

const { db } = await useTestDatabase();
const keyring = keyringSchema.parse(newKeyringEntry('k1'));

/** The statements the database has run for the connection's row (pg_stat_statements is not assumed: counted here). */
function countingDatabase() {
  let reads = 0;
  const counted = new Proxy(db, {
    get(target, property, receiver) {
      if (property === 'sql')
        return (...args: Parameters<typeof db.sql>) => {
          reads++;
          return target.sql(...args);
        };
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  return { db: counted, reads: () => reads };
}

async function connection(authToken: string) {
  const { id: workspaceId } = await createWorkspace(db, `opened ${randomUUID()}`, {});
  return connectCarrier(db, keyring, {
    workspaceId,
    provider: 'twilio',
    account: { family: 'twilio', accountSid: `AC${'a'.repeat(32)}`, secrets: { authToken } },
  });
}

const tokenOf = (opened: { secrets: object } | null) =>
  opened && 'authToken' in opened.secrets ? opened.secrets.authToken : null;

describe('the connections a process keeps opened', () => {
  it('reads a connection once while it is kept, once for concurrent requests, and again once the TTL has passed', async () => {
    const { id } = await connection('1'.repeat(32));
    const counting = countingDatabase();
    let clock = 1_000_000;
    const opened = createOpenedConnections(counting.db, keyring, { ttlMs: 5_000, now: () => clock });
    const first = await Promise.all([opened.get(id), opened.get(id), opened.get(id)]);
    expect(first.map(({ fresh }) => fresh)).toEqual([true, false, false]);
    expect(first.map(({ connection }) => tokenOf(connection))).toEqual(Array(3).fill('1'.repeat(32)));
    expect(counting.reads()).toBe(1);
    clock += 4_999;
    expect((await opened.get(id)).fresh).toBe(false);
    expect(counting.reads()).toBe(1);
    clock += 1;
    expect((await opened.get(id)).fresh).toBe(true);
    expect(counting.reads()).toBe(2);
  });

  it('keeps neither an unknown nor a removed connection: each request asks again', async () => {
    const { id } = await connection('2'.repeat(32));
    const counting = countingDatabase();
    const clock = 1_000_000;
    const opened = createOpenedConnections(counting.db, keyring, { ttlMs: 5_000, now: () => clock });
    const unknown = randomUUID();
    expect((await opened.get(unknown)).connection).toBeNull();
    expect(await opened.get(unknown)).toEqual({ connection: null, fresh: true });
    expect(counting.reads()).toBe(2);
    await opened.get(id);
    await removeCarrierConnection(db, id);
    // Kept within the TTL: a removal is seen at the next read (the TTL), or at once by a request that reads again.
    expect((await opened.get(id)).connection?.id).toBe(id);
    expect(await opened.reread(id)).toBeNull();
    expect(await opened.get(id)).toEqual({ connection: null, fresh: true });
  });

  it('verifies with the kept secrets, and reads again once when they refuse: a rotation is taken at once', async () => {
    const { id } = await connection('3'.repeat(32));
    const counting = countingDatabase();
    const opened = createOpenedConnections(counting.db, keyring, { ttlMs: 60_000 });
    const signedWith = (token: string) => (opened: Parameters<Parameters<typeof verifiedConnection>[2]>[0]) =>
      tokenOf(opened) === token;
    expect((await verifiedConnection(opened, id, signedWith('3'.repeat(32))))?.id).toBe(id);
    expect(counting.reads()).toBe(1);
    // A request neither the kept nor the stored secrets sign: one read more, refused.
    expect(await verifiedConnection(opened, id, signedWith('4'.repeat(32)))).toBeNull();
    expect(counting.reads()).toBe(2);
    await rotateCarrierSecrets(db, keyring, id, { authToken: '4'.repeat(32) });
    expect((await verifiedConnection(opened, id, signedWith('4'.repeat(32))))?.id).toBe(id);
    expect(counting.reads()).toBe(3);
    expect((await verifiedConnection(opened, id, signedWith('4'.repeat(32))))?.id).toBe(id);
    expect(counting.reads()).toBe(3);
    // The old secret: the kept one (the new) refuses it, and so does the stored one.
    expect(await verifiedConnection(opened, id, signedWith('3'.repeat(32)))).toBeNull();
  });
});
