import { generateKeyPairSync } from 'node:crypto';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { withActivityLock } from '../../lib/exports/export-lock';
import { ErrorCode } from '../../lib/error-codes';
import { GoogleSheetsError, GoogleSpreadsheetProvider } from '../../lib/sheets/google-provider';
import { parseServiceAccountKey } from '../../lib/sheets/service-account-key';
import { createSqlPool } from '../../lib/sql-pool';
import { advisoryLockIsFree, useTestDatabase } from '../support/database';

/*
 * A Google that never answers (docs/features/sheets.md#a-google-that-does-not-answer): every request of the google
 * provider, the token's included, fails retryable within its timeout or at once on the activity's cancellation, and
 * the sheet's advisory lock and its connection are free again.
 */

const { url } = await useTestDatabase();
const pool = createSqlPool(url, 4);
afterAll(() => pool.end());

/** A server that takes connections and never answers a byte. */
const sockets = new Set<net.Socket>();
let accepted = 0;
const hung = net.createServer((socket) => {
  accepted++;
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
});
await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
const hungUrl = `http://127.0.0.1:${(hung.address() as net.AddressInfo).port}`;
afterAll(() => {
  for (const socket of sockets) socket.destroy();
  hung.close();
});

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const key = parseServiceAccountKey(
  JSON.stringify({
    type: 'service_account',
    project_id: 'hung',
    private_key_id: 'k1',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    client_email: 'writer@hung.iam.gserviceaccount.com',
    token_uri: `${hungUrl}/token`,
  }),
);
const providerAt = (options: { timeoutMs?: number; signal?: AbortSignal }) =>
  new GoogleSpreadsheetProvider({
    name: 'google-twin',
    key,
    rootUrl: `${hungUrl}/`,
    limiter: { reserve: () => Promise.resolve(0) },
    ...options,
  });

describe('a Google that never answers', () => {
  it('fails each request retryable within its timeout, and the sheet lock is given back', async () => {
    const provider = providerAt({ timeoutMs: 300 });
    let heldDuring = false;
    const started = Date.now();
    const failed = await withActivityLock(pool, 'sheet:hung', ErrorCode.sheet_sync_failed, async () => {
      heldDuring = !(await advisoryLockIsFree(pool, 'sheet:hung'));
      return provider.create({ key: 'spreadsheet-1', title: 't', tab: 'Leads' });
    }).catch((error: unknown) => error);
    // The budget: the 300 ms timeout plus a generous margin for a loaded machine; without it the call waited forever.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(heldDuring).toBe(true);
    expect(failed).toBeInstanceOf(GoogleSheetsError);
    expect(failed).toMatchObject({ retryable: true });
    expect((failed as Error).message).toMatch(/Google Sheets did not answer/);
    expect(await advisoryLockIsFree(pool, 'sheet:hung')).toBe(true);
    // It was the silence that failed it: the request had reached the server.
    expect(accepted).toBeGreaterThan(0);
  });

  it("ends a request in flight at once on the activity's cancellation, and no other is sent", async () => {
    const cancelled = new AbortController();
    const provider = providerAt({ signal: cancelled.signal });
    const reason = new Error('activity cancelled');
    const call = withActivityLock(pool, 'sheet:cancelled', ErrorCode.sheet_sync_failed, () =>
      provider.batchUpdateValues('spreadsheet-2', [{ range: 'Leads!A1', values: [['x']] }]),
    ).catch((error: unknown) => error);
    // Cancelled while its token request hangs (the default timeout, 30 s, is far off).
    await new Promise((resolve) => setTimeout(resolve, 200));
    cancelled.abort(reason);
    const started = Date.now();
    expect(await call).toBe(reason);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await advisoryLockIsFree(pool, 'sheet:cancelled')).toBe(true);
    await expect(provider.batchUpdateValues('spreadsheet-2', [{ range: 'Leads!A1', values: [['x']] }])).rejects.toBe(
      reason,
    );
  });
});
