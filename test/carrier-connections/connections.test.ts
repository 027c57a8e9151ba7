import { describe, expect, it } from 'vitest';
import {
  carrierConnectionForCaller,
  connectCarrier,
  listCarrierConnections,
  rekeyCarrierConnections,
  rotateCarrierSecrets,
} from '../../lib/carrier-connections/connections';
import { ensureTwilioTwinConnection, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import { createWorkspace } from '../../lib/door/workspace-admin';
import { captureLogLines, log } from '../../lib/log';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { Refusal } from '../../lib/refusal';
import { EnvelopeError } from '../../lib/secrets/envelope';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { useTestDatabase } from '../support/database';

const { db } = await useTestDatabase();
const k1 = newKeyringEntry('k1');
const k2 = newKeyringEntry('k2');
const ringK1 = keyringSchema.parse(k1);
const ringK2K1 = keyringSchema.parse(`${k2},${k1}`);
const ringK2 = keyringSchema.parse(k2);

const hex32 = (digit: string) => digit.repeat(32);
let numberSeq = 0;
const nextNumber = () => `+1415555${String(1000 + numberSeq++).slice(-4)}`;

async function twilioConnection(workspaceId: string, authToken: string, keyring = ringK1) {
  return connectCarrier(db, keyring, {
    workspaceId,
    provider: 'twilio',
    label: 'Main account',
    account: { family: 'twilio', accountSid: `AC${hex32('a')}`, secrets: { authToken } },
  });
}

/** The row as PostgreSQL prints it, every column as text (bytea in hex). */
async function rawRow(id: string): Promise<string> {
  const [row] = await db.$queryRaw<Array<{ text: string }>>`
    SELECT row_to_json(c)::text AS text FROM "CarrierConnection" c WHERE id = ${id}::uuid`;
  return row!.text;
}

async function refusalOf(action: () => Promise<unknown>): Promise<Refusal> {
  const error = await action().then(
    () => null,
    (caught: unknown) => caught,
  );
  if (error instanceof Refusal) return error;
  throw new Error(`expected a Refusal, got ${String(error)}`);
}

describe('carrier connections (lib/carrier-connections/connections.ts)', () => {
  it('stores no plaintext secret: the raw row holds neither the token nor its hex, and answers the connection opened for its number', async () => {
    const { id: workspaceId } = await createWorkspace(db, 'Sealed', {});
    const authToken = 'c0ffee00c0ffee00c0ffee00c0ffee00';
    const view = await twilioConnection(workspaceId, authToken);
    expect(JSON.stringify(view)).not.toContain(authToken);
    const raw = await rawRow(view.id);
    expect(raw).toContain(`AC${hex32('a')}`);
    expect(raw).not.toContain(authToken);
    expect(raw).not.toContain(Buffer.from(authToken).toString('hex'));
    expect(raw).not.toContain(Buffer.from(authToken).toString('base64'));

    const e164 = nextNumber();
    await assignPhoneNumber(db, workspaceId, e164, undefined, view.id);
    const opened = await carrierConnectionForCaller(db, ringK1, { workspaceId, e164 });
    expect(opened).toEqual({
      id: view.id,
      workspaceId,
      label: 'Main account',
      provider: 'twilio',
      baseUrl: 'https://api.twilio.com',
      accountSid: `AC${hex32('a')}`,
      apiKeySid: null,
      secrets: { authToken },
    });
  });

  it("refuses with no_carrier_connection a number bound to none, another workspace's number, and an unknown number", async () => {
    const { id: workspaceId } = await createWorkspace(db, 'Unbound', {});
    const { id: otherId } = await createWorkspace(db, 'Other', {});
    const unbound = nextNumber();
    await assignPhoneNumber(db, workspaceId, unbound);
    const theirs = nextNumber();
    const theirConnection = await twilioConnection(otherId, 'feedfacefeedfacefeedfacefeedface');
    await assignPhoneNumber(db, otherId, theirs, undefined, theirConnection.id);
    for (const e164 of [unbound, theirs, nextNumber()]) {
      const refusal = await refusalOf(() => carrierConnectionForCaller(db, ringK1, { workspaceId, e164 }));
      expect(refusal.code).toBe('no_carrier_connection');
      expect(refusal.extras).toMatchObject({ e164 });
    }
  });

  it("refuses to open an envelope copied onto another connection's row (the additional data binds it to its row)", async () => {
    const { id: workspaceId } = await createWorkspace(db, 'Copied', {});
    const { id: victimWorkspace } = await createWorkspace(db, 'Victim', {});
    const source = await twilioConnection(workspaceId, 'aaaaaaaabbbbbbbbccccccccdddddddd');
    for (const target of [
      await twilioConnection(workspaceId, 'token-of-the-target-connection'),
      await twilioConnection(victimWorkspace, 'token-of-the-other-workspace'),
    ]) {
      await db.$executeRaw`
        UPDATE "CarrierConnection" t SET "secretKeyId" = s."secretKeyId", "secretNonce" = s."secretNonce",
               "secretCiphertext" = s."secretCiphertext"
          FROM "CarrierConnection" s WHERE s.id = ${source.id}::uuid AND t.id = ${target.id}::uuid`;
      const e164 = nextNumber();
      await assignPhoneNumber(db, target.workspaceId, e164, undefined, target.id);
      const error = await carrierConnectionForCaller(db, ringK1, { workspaceId: target.workspaceId, e164 }).catch(
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(EnvelopeError);
      expect((error as EnvelopeError).reason).toBe('not_authentic');
    }
  });

  it('rotates a secret (sealed afresh, rotatedAt set) and rekeys every connection from k1 to k2, after which k1 can go', async () => {
    const { id: workspaceId } = await createWorkspace(db, 'Rotating', {});
    const first = await twilioConnection(workspaceId, 'old-token-old-token-old-token-00');
    const e164 = nextNumber();
    await assignPhoneNumber(db, workspaceId, e164, undefined, first.id);
    const rotated = await rotateCarrierSecrets(db, ringK1, first.id, { authToken: 'new-token-new-token-new-token-00' });
    expect(rotated.rotatedAt).not.toBeNull();
    expect(await rawRow(first.id)).not.toContain('token');
    expect((await carrierConnectionForCaller(db, ringK1, { workspaceId, e164 })).secrets).toEqual({
      authToken: 'new-token-new-token-new-token-00',
    });
    await expect(rotateCarrierSecrets(db, ringK1, first.id, { apiKey: 'KEY-of-telnyx' })).rejects.toThrow(
      /takes authToken, not apiKey/,
    );

    const telnyx = await connectCarrier(db, ringK1, {
      workspaceId,
      provider: 'telnyx',
      account: {
        family: 'telnyx',
        connectionId: '1494404757140276705',
        secrets: { apiKey: 'KEY0123456789ABCDEF', publicKey: Buffer.alloc(32, 7).toString('base64') },
      },
    });
    // k2 becomes current: what k1 sealed still opens.
    expect((await carrierConnectionForCaller(db, ringK2K1, { workspaceId, e164 })).secrets).toEqual({
      authToken: 'new-token-new-token-new-token-00',
    });
    await expect(carrierConnectionForCaller(db, ringK2, { workspaceId, e164 })).rejects.toThrow(EnvelopeError);
    const rekey = await rekeyCarrierConnections(db, ringK2K1);
    expect(rekey.keyId).toBe('k2');
    expect(rekey.rekeyed).toEqual(expect.arrayContaining([first.id, telnyx.id]));
    // Rekey runs over every workspace: rows damaged by other tests of this file may be named, never these.
    expect(rekey.unreadable.map(({ id }) => id)).not.toEqual(expect.arrayContaining([first.id]));
    expect(rekey.unreadable.map(({ id }) => id)).not.toEqual(expect.arrayContaining([telnyx.id]));
    expect((await listCarrierConnections(db, workspaceId)).map((each) => each.keyId)).toEqual(['k2', 'k2']);
    expect((await carrierConnectionForCaller(db, ringK2, { workspaceId, e164 })).secrets).toEqual({
      authToken: 'new-token-new-token-new-token-00',
    });
    const again = await rekeyCarrierConnections(db, ringK2K1);
    expect(again.rekeyed.filter((id) => id === first.id || id === telnyx.id)).toEqual([]);
  });

  it('logs no secret: nothing carrier code writes holds the token, and the logger redacts the secret fields by name', async () => {
    const { id: workspaceId } = await createWorkspace(db, 'Logged', {});
    const token = 'logged-token-must-never-appear-0';
    const capture = captureLogLines('trace');
    try {
      const view = await twilioConnection(workspaceId, token);
      const e164 = nextNumber();
      await assignPhoneNumber(db, workspaceId, e164, undefined, view.id);
      const opened = await carrierConnectionForCaller(db, ringK1, { workspaceId, e164 });
      await rotateCarrierSecrets(db, ringK1, view.id, { authToken: `${token}-2` });
      // What an adapter might carelessly log: the connection it opened, or its secrets by name.
      log.info({ connection: opened }, 'dialing');
      log.info({ authToken: token, apiKeySecret: token }, 'careless');
    } finally {
      capture.stop();
    }
    expect(capture.raw.join('')).not.toContain(token);
    expect(capture.lines).toHaveLength(2);
  });

  it('npm start: the development workspace gets one Twilio twin connection, its unbound numbers bound to it, idempotently', async () => {
    const { id: workspaceId } = await createWorkspace(db, 'Development workspace', {});
    const unbound = nextNumber();
    const elsewhere = nextNumber();
    await assignPhoneNumber(db, workspaceId, unbound);
    const own = await twilioConnection(workspaceId, 'a-real-account-of-the-developer-0');
    await assignPhoneNumber(db, workspaceId, elsewhere, undefined, own.id);

    const first = await ensureTwilioTwinConnection(db, ringK1, workspaceId, 'http://127.0.0.1:3100');
    expect(first.connection).toMatchObject({ provider: 'twilio-twin', baseUrl: 'http://127.0.0.1:3100' });
    expect(first.numbersBound).toBe(1);
    const opened = await carrierConnectionForCaller(db, ringK1, { workspaceId, e164: unbound });
    expect(opened).toMatchObject({
      id: first.connection.id,
      provider: 'twilio-twin',
      secrets: { authToken: TWILIO_TWIN_AUTH_TOKEN },
    });
    expect((await carrierConnectionForCaller(db, ringK1, { workspaceId, e164: elsewhere })).id).toBe(own.id);

    // Again, on another port and after the development key ring was made anew: the same connection, sealed again.
    const second = await ensureTwilioTwinConnection(db, ringK2, workspaceId, 'http://127.0.0.1:3999');
    expect(second.connection.id).toBe(first.connection.id);
    expect(second.numbersBound).toBe(0);
    expect(second.connection).toMatchObject({ baseUrl: 'http://127.0.0.1:3999', keyId: 'k2' });
    expect(await db.carrierConnection.count({ where: { workspaceId, provider: 'twilio-twin' } })).toBe(1);
    expect((await carrierConnectionForCaller(db, ringK2, { workspaceId, e164: unbound })).baseUrl).toBe(
      'http://127.0.0.1:3999',
    );
    const third = await ensureTwilioTwinConnection(db, ringK2, workspaceId, 'http://127.0.0.1:3999');
    expect(third.connection.rotatedAt).toBe(second.connection.rotatedAt);

    // The twin moved, the ring kept: the same secrets sealed again for the new base URL (bound to it), no rotation.
    const movedTwin = await ensureTwilioTwinConnection(db, ringK2, workspaceId, 'http://127.0.0.1:3998');
    expect(movedTwin.connection).toMatchObject({
      baseUrl: 'http://127.0.0.1:3998',
      rotatedAt: second.connection.rotatedAt,
    });
    expect(await carrierConnectionForCaller(db, ringK2, { workspaceId, e164: unbound })).toMatchObject({
      baseUrl: 'http://127.0.0.1:3998',
      secrets: { authToken: TWILIO_TWIN_AUTH_TOKEN },
    });
    // Moved behind the product's back: the credentials do not open for the new address.
    await db.carrierConnection.update({
      where: { id: first.connection.id },
      data: { baseUrl: 'http://127.0.0.1:3997' },
    });
    await expect(carrierConnectionForCaller(db, ringK2, { workspaceId, e164: unbound })).rejects.toThrow(
      /fails authentication .*provider or base URL/,
    );
  });
});
