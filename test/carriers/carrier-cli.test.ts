import { describe, expect, it } from 'vitest';
import { carrierConnectionForCaller } from '../../lib/carrier-connections/connections';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { sealingAdminCli } from '../support/admin-cli';
import { useTestDatabase } from '../support/database';

const { db, url } = await useTestDatabase();
const k1 = newKeyringEntry('k1');
const k2 = newKeyringEntry('k2');
// No development key ring to fall back on: the CLI sees only the SECRETS_KEYS each call gives it.
const { admin, adminJson } = sealingAdminCli(url, k1);

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const TOKEN = 'tok3n-that-must-never-be-shown-0';
const twilioConnect = (workspaceId: string, ...more: string[]) => [
  ...['carrier', 'connect', '--workspace', workspaceId, '--provider', 'twilio', '--account-sid', SID],
  ...more,
];
/** `number assign` binding a number of a workspace to a carrier connection. */
const numberAssign = (workspaceId: string, e164: string, connectionId: string) => [
  ...['number', 'assign', '--workspace', workspaceId, '--e164', e164, '--carrier-connection', connectionId],
];
const everything = async () =>
  JSON.stringify(await db.$queryRaw`SELECT row_to_json(c)::text FROM "CarrierConnection" c`) +
  JSON.stringify(await db.$queryRaw`SELECT row_to_json(p)::text FROM "PhoneNumber" p`);

describe('npm run admin: carrier connect, list, rotate, rekey, remove; number assign --carrier-connection', () => {
  it('connects Twilio and Telnyx accounts, lists them without a secret, and binds numbers of the same workspace only', async () => {
    const workspace = await adminJson(['workspace', 'create', '--name', 'Carriers']);
    const other = await adminJson(['workspace', 'create', '--name', 'Someone else']);
    const connect = await admin(twilioConnect(workspace.id, '--auth-token', TOKEN, '--label', 'US account'));
    expect(connect.code).toBe(0);
    expect(connect.stdout + connect.stderr).not.toContain(TOKEN);
    const twilio = JSON.parse(connect.stdout);
    expect(twilio).toMatchObject({
      provider: 'twilio',
      label: 'US account',
      accountSid: SID,
      keyId: 'k1',
      baseUrl: null,
    });

    // The secret from an environment variable, and from standard input: never on the command line. An API key
    // pair takes the account's auth token too, which only checks the callbacks' signatures.
    const apiKeySid = `SK${'f'.repeat(32)}`;
    const byKey = await adminJson(
      twilioConnect(
        workspace.id,
        '--api-key-sid',
        apiKeySid,
        '--api-key-secret-env',
        'MY_KEY_SECRET',
        '--auth-token-stdin',
      ),
      { env: { MY_KEY_SECRET: 'key-secret-from-the-environment' }, input: 'signing-token-from-standard-input\n' },
    );
    const publicKey = Buffer.alloc(32, 9).toString('base64');
    const telnyx = await adminJson(
      [
        'carrier',
        'connect',
        '--workspace',
        workspace.id,
        '--provider',
        'telnyx',
        '--connection-id',
        '1494404757140276705',
        '--public-key',
        publicKey,
        '--api-key-stdin',
        '--base-url',
        'https://api.telnyx.com/v2/',
      ],
      { input: 'KEY_from_standard_input\n' },
    );
    expect(telnyx).toMatchObject({
      provider: 'telnyx',
      connectionId: '1494404757140276705',
      baseUrl: 'https://api.telnyx.com/v2',
    });

    const list = await admin(['carrier', 'list', '--workspace', workspace.id], { keys: null });
    expect(list.code).toBe(0);
    const listed = JSON.parse(list.stdout).connections as Array<Record<string, unknown>>;
    expect(listed.map((each) => each.id)).toEqual([twilio.id, byKey.id, telnyx.id]);
    expect(listed[1]).toMatchObject({ apiKeySid, accountSid: SID, authTokenSet: true });
    expect(listed[0]).toMatchObject({ apiKeySid: null, authTokenSet: true });
    expect(listed[2]).toMatchObject({ authTokenSet: null });
    for (const secret of [
      TOKEN,
      'key-secret-from-the-environment',
      'signing-token-from-standard-input',
      'KEY_from_standard_input',
    ]) {
      expect(list.stdout).not.toContain(secret);
      expect(await everything()).not.toContain(secret);
    }
    expect(JSON.parse((await admin(['carrier', 'list', '--workspace', other.id])).stdout)).toEqual({ connections: [] });

    const e164 = '+14155550142';
    expect(await adminJson(numberAssign(workspace.id, e164, twilio.id))).toMatchObject({
      carrierConnectionId: twilio.id,
    });
    const ring = keyringSchema.parse(k1);
    expect((await carrierConnectionForCaller(db, ring, { workspaceId: workspace.id, e164 })).secrets).toEqual({
      authToken: TOKEN,
    });
    await adminJson(numberAssign(workspace.id, '+14155550143', telnyx.id));
    const viaStdin = await carrierConnectionForCaller(db, ring, { workspaceId: workspace.id, e164: '+14155550143' });
    expect(viaStdin.secrets).toEqual({ apiKey: 'KEY_from_standard_input', publicKey });
    await adminJson(numberAssign(workspace.id, '+14155550145', byKey.id));
    const keyPair = await carrierConnectionForCaller(db, ring, { workspaceId: workspace.id, e164: '+14155550145' });
    expect(keyPair.secrets).toEqual({
      apiKeySecret: 'key-secret-from-the-environment',
      authToken: 'signing-token-from-standard-input',
    });

    // Another workspace's connection, an unknown one, a number of another workspace: refused, nothing changed.
    // The three at once: each is refused without a write.
    const before = await everything();
    const [theirs, unknown, notUuid] = await Promise.all([
      admin(numberAssign(other.id, '+14155550144', twilio.id)),
      admin(numberAssign(workspace.id, e164, '00000000-0000-4000-8000-000000000000')),
      admin(numberAssign(workspace.id, e164, 'twilio')),
    ]);
    expect(theirs).toMatchObject({ code: 1, stdout: '' });
    expect(theirs.stderr).toMatch(
      new RegExp(`no live carrier connection of workspace ${other.id} has id ${twilio.id}`),
    );
    expect(unknown.code).toBe(1);
    expect(notUuid.code).toBe(64);
    expect(await everything()).toBe(before);
  });

  it('refuses bad input with one line naming the flag, never echoing a secret, and stores nothing', async () => {
    const workspace = await adminJson(['workspace', 'create', '--name', 'Refusals']);
    const base = ['carrier', 'connect', '--workspace', workspace.id];
    const cases: Array<[string[], RegExp, Parameters<typeof admin>[1]?]> = [
      [
        [...base, '--provider', 'twilio', '--account-sid', `AC${'g'.repeat(32)}`, '--auth-token', TOKEN],
        /^--account-sid: must be AC followed by 32 hexadecimal digits/,
      ],
      [
        [...base, '--provider', 'twilio', '--account-sid', `AC${'a'.repeat(31)}`, '--auth-token', TOKEN],
        /^--account-sid: must be AC/,
      ],
      [
        [
          ...base,
          '--provider',
          'twilio',
          '--account-sid',
          SID,
          '--api-key-sid',
          `SK${'a'.repeat(33)}`,
          '--api-key-secret',
          TOKEN,
        ],
        /^--api-key-sid: must be SK followed by 32/,
      ],
      [[...base, '--provider', 'twilio', '--account-sid', SID], /^--auth-token is required/],
      [
        [...base, '--provider', 'twilio', '--account-sid', SID, '--api-key-sid', `SK${'a'.repeat(32)}`],
        /^--api-key-secret is required/,
      ],
      [
        // An API key pair without the auth token: its callbacks could never be verified.
        [
          ...base,
          '--provider',
          'twilio',
          '--account-sid',
          SID,
          '--api-key-sid',
          `SK${'a'.repeat(32)}`,
          '--api-key-secret',
          TOKEN,
        ],
        /^--auth-token is required with an API key pair .*Twilio signs its callbacks with the account's auth token/,
      ],
      [
        [...base, '--provider', 'twilio', '--account-sid', SID, '--api-key-secret', TOKEN, '--auth-token', TOKEN],
        /^--api-key-secret: goes with --api-key-sid/,
      ],
      [
        [...base, '--provider', 'twilio', '--account-sid', SID, '--auth-token', TOKEN, '--auth-token-env', 'X'],
        /^--auth-token-env: give --auth-token one way only/,
      ],
      [
        [...base, '--provider', 'twilio', '--account-sid', SID, '--auth-token', 'short'],
        /^--auth-token: must be 8 to 512 printable/,
      ],
      [
        [...base, '--provider', 'twilio', '--account-sid', SID, '--auth-token-env', 'UNSET_VARIABLE_X'],
        /^--auth-token-env: UNSET_VARIABLE_X is not set/,
      ],
      [
        [...base, '--provider', 'twilio', '--account-sid', SID, '--auth-token', TOKEN, '--connection-id', '1'],
        /^--connection-id: not a flag of twilio connections/,
      ],
      [
        [...base, '--provider', 'twilio-twin', '--account-sid', SID, '--auth-token', TOKEN],
        /needs the base URL of its twin/,
      ],
      [
        [...base, '--provider', 'telnyx', '--connection-id', '1', '--public-key', 'bm90IGEga2V5', '--api-key', TOKEN],
        /^--public-key: must be an Ed25519 public key/,
      ],
      [
        [...base, '--provider', 'telnyx', '--public-key', Buffer.alloc(32).toString('base64'), '--api-key', TOKEN],
        /^--connection-id is required/,
      ],
      [[...base, '--provider', 'vonage', '--auth-token', TOKEN], /^--provider: /],
      [
        [...base, '--provider', 'twilio', '--account-sid', SID, '--auth-token', TOKEN],
        /^config: SECRETS_KEYS is invalid: entry 1 must be/,
        { keys: 'not-a-ring' },
      ],
      [
        [...base, '--provider', 'twilio', '--account-sid', SID, '--auth-token', TOKEN],
        /^config: SECRETS_KEYS is required but not set/,
        { keys: null },
      ],
    ];
    // Each case a process of its own, four at a time: they are independent (each stores nothing), and one after
    // another they took a minute of a loaded machine's wall time.
    const results: Array<Awaited<ReturnType<typeof admin>>> = [];
    for (let from = 0; from < cases.length; from += 4)
      results.push(
        ...(await Promise.all(cases.slice(from, from + 4).map(([args, , options]) => admin(args, options)))),
      );
    for (const [index, [args, message]] of cases.entries()) {
      const result = results[index]!;
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).not.toContain(TOKEN);
    }
    expect(await db.carrierConnection.count({ where: { workspaceId: workspace.id } })).toBe(0);
  });

  it('rotates a secret, rekeys to a new current key, and removes a connection only once no number is bound to it', async () => {
    const workspace = await adminJson(['workspace', 'create', '--name', 'Lifecycle']);
    const e164 = '+14155550150';
    const newToken = 'the-rotated-token-0000000000000000';
    // An auth-token connection and an API key one rotate side by side: neither touches the other's rows.
    const rotatedAuthToken = async () => {
      const connection = await adminJson(twilioConnect(workspace.id, '--auth-token', TOKEN));
      await adminJson(numberAssign(workspace.id, e164, connection.id));

      const rotated = await adminJson(['carrier', 'rotate', '--connection', connection.id, '--auth-token-stdin'], {
        input: `${newToken}\n`,
      });
      expect(rotated.rotatedAt).toEqual(expect.any(String));
      expect(JSON.stringify(rotated)).not.toContain(newToken);
      const wrongKind = await admin(['carrier', 'rotate', '--connection', connection.id, '--api-key-secret', newToken]);
      expect(wrongKind).toMatchObject({ code: 1 });
      expect(wrongKind.stderr).toMatch(/takes authToken, not apiKeySecret/);
      expect(
        (await carrierConnectionForCaller(db, keyringSchema.parse(k1), { workspaceId: workspace.id, e164 })).secrets,
      ).toEqual({ authToken: newToken });
      return connection;
    };
    // An API key connection: its key secret and its auth token (the callbacks' check) each rotate alone, the other kept.
    const rotatedApiKey = async () => {
      const keyed = await adminJson(
        twilioConnect(
          workspace.id,
          '--api-key-sid',
          `SK${'e'.repeat(32)}`,
          '--api-key-secret',
          TOKEN,
          '--auth-token',
          TOKEN,
        ),
      );
      expect(keyed).toMatchObject({ authTokenSet: true });
      const keyedNumber = '+14155550151';
      await adminJson(numberAssign(workspace.id, keyedNumber, keyed.id));
      const keyedSecrets = async () =>
        (
          await carrierConnectionForCaller(db, keyringSchema.parse(k1), {
            workspaceId: workspace.id,
            e164: keyedNumber,
          })
        ).secrets;
      await adminJson(['carrier', 'rotate', '--connection', keyed.id, '--auth-token-stdin'], {
        input: `${newToken}\n`,
      });
      expect(await keyedSecrets()).toEqual({ apiKeySecret: TOKEN, authToken: newToken });
      const newSecret = 'the-rotated-key-secret-00000000000';
      const keyRotated = await adminJson([
        'carrier',
        'rotate',
        '--connection',
        keyed.id,
        '--api-key-secret',
        newSecret,
      ]);
      expect(keyRotated).toMatchObject({ authTokenSet: true });
      expect(JSON.stringify(keyRotated)).not.toContain(newSecret);
      expect(await keyedSecrets()).toEqual({ apiKeySecret: newSecret, authToken: newToken });
      const telnyxKind = await admin(['carrier', 'rotate', '--connection', keyed.id, '--api-key', newSecret]);
      expect(telnyxKind.stderr).toMatch(/takes apiKeySecret or authToken, not apiKey/);
      await adminJson(['number', 'release', '--e164', keyedNumber]);
      expect(await adminJson(['carrier', 'remove', '--connection', keyed.id])).toEqual({ id: keyed.id });
    };
    const [connection] = await Promise.all([rotatedAuthToken(), rotatedApiKey()]);

    // k2 put first: rekey moves everything to it, after which k1 can leave the ring.
    // Every workspace's connections move (the earlier tests' too), this one among them.
    const rekey = await adminJson(['carrier', 'rekey'], { keys: `${k2},${k1}` });
    expect(rekey).toMatchObject({ keyId: 'k2', rekeyed: expect.arrayContaining([connection.id]) });
    expect(
      (await carrierConnectionForCaller(db, keyringSchema.parse(k2), { workspaceId: workspace.id, e164 })).secrets,
    ).toEqual({ authToken: newToken });

    const inUse = await admin(['carrier', 'remove', '--connection', connection.id]);
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toMatch(new RegExp(`in use by \\+14155550150`));
    expect(await db.carrierConnection.findUniqueOrThrow({ where: { id: connection.id } })).toMatchObject({
      deletedAt: null,
    });

    await adminJson(['number', 'release', '--e164', e164]);
    expect(await adminJson(['carrier', 'remove', '--connection', connection.id])).toEqual({ id: connection.id });
    expect(await db.carrierConnection.findUniqueOrThrow({ where: { id: connection.id } })).toMatchObject({
      deletedAt: expect.any(Date),
      secretKeyId: null,
      secretNonce: null,
      secretCiphertext: null,
    });
    expect(JSON.parse((await admin(['carrier', 'list', '--workspace', workspace.id])).stdout)).toEqual({
      connections: [],
    });
    // The three at once: each is refused without a write.
    const afterRemoval = [
      ['carrier', 'remove', '--connection', connection.id],
      ['carrier', 'rotate', '--connection', connection.id, '--auth-token', newToken],
      numberAssign(workspace.id, e164, connection.id),
    ];
    const refusals = await Promise.all(afterRemoval.map((args) => admin(args)));
    for (const [index, refused] of refusals.entries()) {
      expect(refused.code, afterRemoval[index]!.join(' ')).toBe(1);
      expect(refused.stderr).toMatch(/no live carrier connection/);
    }
  });
});
