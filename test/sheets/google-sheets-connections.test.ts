// Google service account connections for live sheets (docs/features/sheets.md#connecting): the operator CLI's
// `sheets connect|list|rotate|rekey|remove` and `sheet attach|detach`, the key sealed and never shown, and the write
// pace every worker shares through PostgreSQL.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { openSheetConnection } from '../../lib/sheets/opened-connection';
import { sheetWriteLimiter } from '../../lib/sheets/quota';
import { createSqlPool } from '../../lib/sql-pool';
import { createServiceAccountKey } from '../../simulators/google-twin/oauth';
import { sealingAdminCli } from '../support/admin-cli';
import { useTestDatabase } from '../support/database';

const { db, url } = await useTestDatabase();
const sql = createSqlPool(url);
const k1 = newKeyringEntry('k1');
const k2 = newKeyringEntry('k2');
const { admin, adminJson, dataDir: dir } = sealingAdminCli(url, k1);

/** A service account key as Google's console downloads it, written to a file. */
function keyFile(clientEmail: string, name: string) {
  const { key } = createServiceAccountKey({
    clientEmail,
    projectId: 'customer-project',
    tokenUri: 'https://oauth2.googleapis.com/token',
  });
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(key, null, 2));
  return { key, file };
}

const SPREADSHEET = '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms';

/** The CLI's words of the steps below: `sheets connect` (its key as the options after say), `sheets rotate`, `sheet attach`. */
const sheetsConnect = (workspaceId: string, provider: string, ...options: string[]) => [
  'sheets',
  'connect',
  '--workspace',
  workspaceId,
  '--provider',
  provider,
  ...options,
];
const sheetsRotate = (connectionId: string, keyFile: string) => [
  'sheets',
  'rotate',
  '--connection',
  connectionId,
  '--key-file',
  keyFile,
];
const sheetAttach = (campaignId: string, connectionId: string, spreadsheet: string) => [
  'sheet',
  'attach',
  '--campaign',
  campaignId,
  '--connection',
  connectionId,
  '--spreadsheet',
  spreadsheet,
];

// Each step is an admin CLI process of its own (a tsx start each): a loaded runner takes minutes for the lot.
describe(
  'npm run admin: sheets connect, list, rotate, rekey, remove; sheet attach, detach',
  { timeout: 240_000 },
  () => {
    it('connects a service account with its key sealed, attaches a spreadsheet to a live sheet, and never shows the key', async () => {
      const workspace = await adminJson(['workspace', 'create', '--name', 'Sheets']);
      const email = 'live-sheets@customer-project.iam.gserviceaccount.com';
      const first = keyFile(email, 'first');
      const connected = await admin(
        sheetsConnect(workspace.id, 'google', '--key-file', first.file, '--label', 'Customer'),
      );
      expect(connected.code).toBe(0);
      expect(connected.stdout + connected.stderr).not.toContain('PRIVATE KEY');
      const connection = JSON.parse(connected.stdout) as Record<string, any>;
      expect(connection).toMatchObject({
        provider: 'google',
        label: 'Customer',
        serviceAccountEmail: email,
        baseUrl: null,
        keyId: 'k1',
        rotatedAt: null,
      });
      const stored = JSON.stringify(await db.$queryRaw`SELECT row_to_json(s)::text FROM "SheetConnection" s`);
      expect(stored).not.toContain(first.key.private_key.split('\n')[1]!);
      expect(stored).not.toContain(first.key.private_key_id);
      // Opened with the ring, the key is the one given; with another ring, it does not open.
      const opened = await openSheetConnection(sql, keyringSchema.parse(k1), connection.id as string);
      expect(opened).toMatchObject({
        provider: 'google',
        rootUrl: 'https://sheets.googleapis.com/',
        key: { private_key: first.key.private_key },
      });
      await expect(openSheetConnection(sql, keyringSchema.parse(k2), connection.id as string)).rejects.toThrow();

      // Listed without the key; from standard input as well as a file.
      const listed = await admin(['sheets', 'list', '--workspace', workspace.id]);
      expect(listed.stdout).not.toContain('PRIVATE KEY');
      expect(JSON.parse(listed.stdout).connections).toEqual([connection]);
      const viaStdin = await adminJson(
        sheetsConnect(workspace.id, 'google-twin', '--base-url', 'http://127.0.0.1:3700', '--key-stdin'),
        {
          input: JSON.stringify(keyFile('twin@twin-project.iam.gserviceaccount.com', 'twin').key),
        },
      );
      expect(viaStdin).toMatchObject({ provider: 'google-twin', baseUrl: 'http://127.0.0.1:3700/' });

      // Bad input is a usage error (64) that never repeats the key.
      const notJson = await admin(sheetsConnect(workspace.id, 'google', '--key-stdin'), { input: 'secret-not-json' });
      expect([notJson.code, notJson.stderr.trim()]).toEqual([64, 'the service account key is not JSON']);
      const twinWithoutUrl = await admin(sheetsConnect(workspace.id, 'google-twin', '--key-file', first.file));
      expect([twinWithoutUrl.code, twinWithoutUrl.stderr]).toEqual([64, expect.stringContaining('needs the base URL')]);
      const onTheLine = await admin(sheetsConnect(workspace.id, 'google', '--key', '{}'));
      expect(onTheLine.code).toBe(64);

      // Rotation: a new key of the same account; another account's key is refused.
      const rotated = await adminJson(sheetsRotate(connection.id, keyFile(email, 'second').file));
      expect(rotated.rotatedAt).toEqual(expect.any(String));
      const foreign = await admin(
        sheetsRotate(connection.id, keyFile('other@x.iam.gserviceaccount.com', 'other').file),
      );
      expect([foreign.code, foreign.stderr]).toEqual([
        64,
        expect.stringContaining('another account is another connection'),
      ]);

      // Rekey: every live connection moved to the ring's new first key.
      const rekeyed = await adminJson(['sheets', 'rekey'], { keys: `${k2},${k1}` });
      expect(rekeyed).toEqual({ keyId: 'k2', rekeyed: expect.arrayContaining([connection.id]) });
      expect(await openSheetConnection(sql, keyringSchema.parse(k2), connection.id as string)).not.toBeNull();

      // Attach a customer's spreadsheet (by its address) to a campaign's live sheet; removal is refused while attached.
      const campaign = await db.campaign.create({ data: { workspaceId: workspace.id, name: 'Attached' } });
      const sheetId = crypto.randomUUID();
      await db.liveSheet.create({
        data: {
          id: sheetId,
          workspaceId: workspace.id,
          campaignId: campaign.id,
          spreadsheetId: sheetId,
          columns: ['leadId'],
          intervalSeconds: 300,
        },
      });
      await db.liveSheetRow.create({ data: { sheetId, leadId: crypto.randomUUID(), row: 2 } });
      const attached = await adminJson(
        sheetAttach(campaign.id, connection.id, `https://docs.google.com/spreadsheets/d/${SPREADSHEET}/edit#gid=0`),
        { keys: `${k2},${k1}` },
      );
      expect(attached).toMatchObject({
        sheetId,
        provider: 'google',
        spreadsheetId: SPREADSHEET,
        serviceAccountEmail: email,
      });
      expect(await db.liveSheet.findUnique({ where: { id: sheetId } })).toMatchObject({
        provider: 'google',
        connectionId: connection.id,
        spreadsheetId: SPREADSHEET,
        cursor: null,
        rowCount: 0,
        status: 'rebuilding',
      });
      expect(await db.liveSheetRow.count({ where: { sheetId } })).toBe(0);
      const inUse = await admin(['sheets', 'remove', '--connection', connection.id]);
      expect([inUse.code, inUse.stderr]).toEqual([1, expect.stringContaining('detach them first')]);
      const otherWorkspace = await adminJson(['workspace', 'create', '--name', 'Someone else']);
      const strangerKey = keyFile('stranger@x.iam.gserviceaccount.com', 'stranger');
      const stranger = await adminJson(sheetsConnect(otherWorkspace.id, 'google', '--key-file', strangerKey.file));
      const crossed = await admin(sheetAttach(campaign.id, stranger.id, SPREADSHEET));
      expect(crossed.code).toBe(1);
      const badId = await admin(sheetAttach(campaign.id, connection.id, 'x/y'));
      expect(badId.code).toBe(64);

      // Detach: back to the local provider; then the connection can go, its key wiped.
      expect(await adminJson(['sheet', 'detach', '--campaign', campaign.id])).toEqual({ sheetId, provider: 'local' });
      expect(await db.liveSheet.findUnique({ where: { id: sheetId } })).toMatchObject({
        provider: 'local',
        connectionId: null,
        spreadsheetId: sheetId,
      });
      expect(await adminJson(['sheets', 'remove', '--connection', connection.id])).toEqual({ id: connection.id });
      expect(await db.sheetConnection.findUnique({ where: { id: connection.id } })).toMatchObject({
        secretCiphertext: null,
        secretKeyId: null,
        deletedAt: expect.any(Date),
      });
      expect(await openSheetConnection(sql, keyringSchema.parse(k2), connection.id as string)).toBeNull();
    });
  },
);

describe('the write pace per service account, in PostgreSQL', () => {
  it('spaces the writes of every worker by 60 s / writesPerMinute after the burst, per account', async () => {
    const pace = { writesPerMinute: 60, burst: 2 };
    const otherPool = createSqlPool(url);
    // Two "workers" (pools) reserving for one account at once, and one reservation for another account.
    const account = `pace-${crypto.randomUUID()}@x.iam.gserviceaccount.com`;
    const [one, two] = [sheetWriteLimiter(sql, pace), sheetWriteLimiter(otherPool, pace)];
    const started = performance.now();
    const waits = await Promise.all(Array.from({ length: 8 }, (_, index) => (index % 2 ? one : two).reserve(account)));
    // Each wait is counted from its own statement's now(): the later a statement ran, the less it waits for its slot.
    // How much later is at most the time the eight took (on a loaded machine, seconds), so that is the tolerance.
    const statementsTookMs = performance.now() - started;
    const sorted = [...waits].sort((a, b) => a - b);
    expect(sorted.slice(0, 2)).toEqual([0, 0]);
    // Then one a second: 1 s, 2 s, ... 6 s after the first statement.
    sorted.slice(2).forEach((wait, index) => {
      expect(wait).toBeGreaterThanOrEqual((index + 1) * 1_000 - statementsTookMs);
      expect(wait).toBeLessThanOrEqual((index + 1) * 1_000);
    });
    expect(await one.reserve(`other-${account}`)).toBe(0);
    await otherPool.end();
  });
});
