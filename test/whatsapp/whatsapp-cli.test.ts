// `npm run admin -- whatsapp connect|list|rotate|rekey|remove` and `whatsapp sender connect --connection`
// (docs/features/whatsapp/meta-cloud-api.md): Meta's ids in clear, the token sealed and never shown.
import { describe, expect, it } from 'vitest';
import { openWhatsAppConnection } from '../../lib/whatsapp/connections';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { sealingAdminCli } from '../support/admin-cli';
import { useTestDatabase } from '../support/database';

const { db, url } = await useTestDatabase();
const k1 = newKeyringEntry('k1');
const k2 = newKeyringEntry('k2');
const { admin, adminJson } = sealingAdminCli(url, k1);

const TOKEN = 'EAABsystemUserTokenThatMustNeverBeShown0123';
const connect = (workspaceId: string, ...more: string[]) => [
  ...['whatsapp', 'connect', '--workspace', workspaceId, '--provider', 'meta'],
  ...['--phone-number-id', '106540352242922', '--business-account-id', '102290129340398'],
  ...['--display-number', '14155550183', ...more],
];

describe('npm run admin: whatsapp connect, list, rotate, rekey, remove; whatsapp sender connect --connection', () => {
  it('connects with the token from standard input, lists without it, binds a sender to Meta’s ids, rotates, rekeys and removes', async () => {
    const workspace = await adminJson(['workspace', 'create', '--name', 'Meta']);
    const connected = await admin(connect(workspace.id, '--access-token-stdin'), { input: `${TOKEN}\n` });
    expect(connected.code).toBe(0);
    expect(connected.stdout + connected.stderr).not.toContain(TOKEN);
    const connection = JSON.parse(connected.stdout) as Record<string, any>;
    expect(connection).toMatchObject({
      provider: 'meta',
      phoneNumberId: '106540352242922',
      businessAccountId: '102290129340398',
      displayPhoneNumber: '14155550183',
      baseUrl: null,
      keyId: 'k1',
    });
    const listed = await admin(['whatsapp', 'list', '--workspace', workspace.id]);
    expect(listed.stdout).not.toContain(TOKEN);
    expect(JSON.parse(listed.stdout).connections).toHaveLength(1);
    const stored = JSON.stringify(await db.$queryRaw`SELECT row_to_json(c)::text FROM "WhatsAppConnection" c`);
    expect(stored).not.toContain(TOKEN);
    const opened = await openWhatsAppConnection(db, keyringSchema.parse(k1), connection.id);
    expect(opened).toMatchObject({ accessToken: TOKEN, baseUrl: 'https://graph.facebook.com' });

    // A twin needs its base URL.
    const twinWithoutUrl = await admin(
      ['whatsapp', 'connect', '--workspace', workspace.id, '--provider', 'meta-twin'].concat(
        connect(workspace.id).slice(6),
        ['--access-token-env', 'META_TOKEN'],
      ),
      { env: { META_TOKEN: TOKEN } },
    );
    expect(twinWithoutUrl.code).toBe(64);
    expect(twinWithoutUrl.stderr + twinWithoutUrl.stdout).not.toContain(TOKEN);

    const sender = await adminJson([
      ...['whatsapp', 'sender', 'connect', '--workspace', workspace.id, '--e164', '+14155550183'],
      ...['--connection', connection.id],
    ]);
    expect(await db.whatsAppSender.findUniqueOrThrow({ where: { id: sender.id } })).toMatchObject({
      provider: 'meta',
      phoneNumberId: '106540352242922',
      businessAccountId: '102290129340398',
      connectionId: connection.id,
    });

    const newToken = 'EAABrotatedTokenThatMustNeverBeShown456789';
    const rotated = await admin(['whatsapp', 'rotate', '--connection', connection.id, '--access-token-stdin'], {
      input: `${newToken}\n`,
    });
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).not.toContain(newToken);
    expect(JSON.parse(rotated.stdout).rotatedAt).not.toBeNull();

    const both = `${k2},${k1}`;
    const rekeyed = await adminJson(['whatsapp', 'rekey'], { keys: both });
    expect(rekeyed.keyId).toBe('k2');
    expect(rekeyed.rekeyed).toContain(connection.id);
    expect(await openWhatsAppConnection(db, keyringSchema.parse(k2), connection.id)).toMatchObject({
      accessToken: newToken,
    });

    // Removal is refused while the sender sends through it; disconnected, it goes and its token is wiped.
    const refused = await admin(['whatsapp', 'remove', '--connection', connection.id], { keys: both });
    expect(refused.code).toBe(1);
    await db.whatsAppSender.update({ where: { id: sender.id }, data: { status: 'DISCONNECTED' } });
    await adminJson(['whatsapp', 'remove', '--connection', connection.id], { keys: both });
    const row = await db.whatsAppConnection.findUniqueOrThrow({ where: { id: connection.id } });
    expect(row).toMatchObject({ secretKeyId: null, secretNonce: null, secretCiphertext: null });
    expect(row.deletedAt).not.toBeNull();
  });
});
