import { afterEach, describe, expect, it } from 'vitest';
import { captureLogLines, configureLogging, log, secretsOfConfig } from '../lib/log';
import { startTestApi } from './support/api';
import { useTestDatabase } from './support/database';
import { useTemporalClient } from './support/temporal';
import { createTestWorkspace } from './support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view'] });

const WEBHOOK_SECRET = `whsec_${Buffer.from('a result webhook secret of 32 b!').toString('base64')}`;
const CHAT_API_KEY = 'sk-chat-model-key-0123456789abcdef';

let capture: ReturnType<typeof captureLogLines> | null = null;
afterEach(() => capture?.stop());

function capturing(level: 'info' | 'warn' = 'info') {
  capture = captureLogLines(level);
  return capture;
}

/** The request's line: the one `request answered` line whose requestId is the response's X-Request-Id. */
function requestLine(lines: Array<Record<string, unknown>>, response: Response) {
  const requestId = response.headers.get('x-request-id');
  expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
  const line = lines.find((candidate) => candidate.requestId === requestId && candidate.msg === 'request answered');
  expect(line, JSON.stringify(lines)).toBeDefined();
  return line!;
}

describe('structured logs', () => {
  it('writes one JSON line per request with its request, workspace and campaign ids, and never the key or a secret it carries', async () => {
    const { lines, raw } = capturing();
    const created = await api.request('POST', '/campaigns', {
      key: owner.key,
      body: { name: 'Logged' },
      headers: { 'x-webhook-secret': WEBHOOK_SECRET },
    });
    expect(created.status).toBe(201);
    const refused = await api.request('POST', '/campaigns', {
      key: owner.key,
      body: { name: 'Logged', webhookSecret: WEBHOOK_SECRET },
    });
    expect(refused.status).toBe(400);
    const { id: campaignId } = (await created.json()) as { id: string };
    const read = await api.request('GET', `/campaigns/${campaignId}?secret=${encodeURIComponent(WEBHOOK_SECRET)}`, {
      key: owner.key,
    });
    expect(read.status).toBe(200);
    await new Promise((resolve) => setImmediate(resolve));

    expect(requestLine(lines, created)).toMatchObject({
      level: 'info',
      service: expect.any(String),
      method: 'POST',
      route: '/campaigns',
      status: 201,
      workspaceId: owner.workspaceId,
    });
    expect(requestLine(lines, refused)).toMatchObject({
      route: '/campaigns',
      status: 400,
      workspaceId: owner.workspaceId,
    });
    expect(requestLine(lines, read)).toMatchObject({
      method: 'GET',
      route: '/campaigns/{id}',
      status: 200,
      workspaceId: owner.workspaceId,
      campaignId,
      durationMs: expect.any(Number),
    });
    const text = raw.join('');
    expect(text).not.toContain(owner.key);
    expect(text).not.toContain(WEBHOOK_SECRET);
    expect(text).not.toContain(Buffer.from('a result webhook secret of 32 b!').toString('base64'));
  });

  it('logs a refused request too, with its request id and no workspace, and never the wrong key it presented', async () => {
    const { lines, raw } = capturing();
    const wrongKey = `${owner.key.slice(0, -4)}AAAA`;
    const refused = await api.request('GET', '/campaigns', { key: wrongKey });
    expect(refused.status).toBe(401);
    await new Promise((resolve) => setImmediate(resolve));
    const line = requestLine(lines, refused);
    expect(line).toMatchObject({ route: '/campaigns', status: 401 });
    expect(line.workspaceId).toBeUndefined();
    expect(raw.join('')).not.toContain(wrongKey);
  });

  it('scrubs secrets from whatever a line holds: fields named for secrets, keys and bearer tokens in text, and the configuration’s secret values', () => {
    configureLogging({
      level: 'info',
      service: 'logs-test',
      secrets: secretsOfConfig({
        CHAT_API_KEY,
        INTELLIGENCE_API_KEY: 'intelligence-model-key-31',
        SIMULATED_CARRIER_SIGNING_SECRET: 'carrier-signing-secret-42',
        DATABASE_URL: 'postgresql://app:db-password-77@localhost/app',
      }),
    });
    const { lines, raw } = capturing();
    log.error(
      {
        err: new Error(`the provider refused Bearer ${owner.key} and ${WEBHOOK_SECRET}`),
        headers: { authorization: `Bearer ${owner.key}` },
        endpoint: { secret: WEBHOOK_SECRET, url: 'https://receiver.example/hook' },
        workflowId: 'lead-x',
      },
      `chat model answered 401 for ${CHAT_API_KEY}; intelligence intelligence-model-key-31; carrier secret carrier-signing-secret-42; db db-password-77`,
    );
    const text = raw.join('');
    for (const secret of [
      owner.key,
      WEBHOOK_SECRET,
      CHAT_API_KEY,
      'intelligence-model-key-31',
      'carrier-signing-secret-42',
      'db-password-77',
    ])
      expect(text).not.toContain(secret);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'error',
      service: 'logs-test',
      workflowId: 'lead-x',
      endpoint: { secret: '[redacted]', url: 'https://receiver.example/hook' },
      headers: { authorization: '[redacted]' },
    });
    expect(String(lines[0]!.msg)).toContain('[redacted]');
  });

  it('writes nothing below the configured level', () => {
    configureLogging({ level: 'warn', service: 'logs-test' });
    const { lines } = capturing('warn');
    log.info('not written');
    log.warn('written');
    expect(lines.map((line) => line.msg)).toEqual(['written']);
  });
});
