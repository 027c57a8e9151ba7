import { Client, Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { freePort } from '../scripts/stack/child-process';
import { createDatabase } from '../lib/database';
import { startTestApi } from './support/api';
import { useTestDatabase } from './support/database';
import { useTemporalClient } from './support/temporal';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();

async function lazyTemporalAt(address: string) {
  const connection = Connection.lazy({ address });
  return { connection, client: new Client({ connection }) };
}

describe('GET /health', () => {
  it('answers 200 with both dependencies up', async () => {
    const api = await startTestApi({ db, url, temporal });
    const response = await api.request('GET', '/health');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', database: 'up', temporal: 'up' });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers 503 naming the database when PostgreSQL is unreachable', async () => {
    const unreachableUrl = `postgresql://postgres@127.0.0.1:${await freePort()}/none`;
    const api = await startTestApi({ db: createDatabase(unreachableUrl), url: unreachableUrl, temporal });
    const response = await api.request('GET', '/health');
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: 'unavailable', database: 'down', temporal: 'up' });
  });

  it('answers 503 naming Temporal when the Temporal server is unreachable', async () => {
    const down = await lazyTemporalAt(`127.0.0.1:${await freePort()}`);
    const api = await startTestApi({ db, url, temporal: { ...down, taskQueue: temporal.taskQueue } });
    const response = await api.request('GET', '/health');
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: 'unavailable', database: 'up', temporal: 'down' });
  });
});
