// GET and PUT /v1/compliance (docs/features/compliance.md#the-api) on the real app; every answer is checked against
// the OpenAPI description by the test API.
import { describe, expect, it } from 'vitest';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });

const OFF = { cardNumbers: false, emailAddresses: false, usSocialSecurityNumbers: false, ibans: false };
const SETTINGS = {
  disclosure: '  This call is recorded and handled by an AI assistant.  ',
  redaction: { ...OFF, cardNumbers: true, emailAddresses: true },
};

async function call(method: string, key: string, body?: unknown) {
  const response = await api.request(method, '/v1/compliance', { key, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('/v1/compliance', () => {
  it('answers the defaults until set, then what was set, to this workspace only', async () => {
    const full = await createTestWorkspace(db); // a key issued without scopes: every /v1 endpoint
    const other = await createTestWorkspace(db);
    expect(await call('GET', full.key)).toEqual({
      status: 200,
      body: { disclosure: null, redaction: OFF, recording: { enabled: false, retentionDays: null }, updatedAt: null },
    });
    const put = await call('PUT', full.key, SETTINGS);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      disclosure: 'This call is recorded and handled by an AI assistant.',
      redaction: SETTINGS.redaction,
    });
    expect(typeof put.body.updatedAt).toBe('string');
    expect((await call('GET', full.key)).body).toEqual(put.body);
    expect((await call('GET', other.key)).body).toMatchObject({ disclosure: null, redaction: OFF });
    const stored = await db.complianceSettings.findUniqueOrThrow({ where: { workspaceId: full.workspaceId } });
    expect(stored.redactions).toEqual(['card_number', 'email_address']);

    // Replaced whole: the disclosure removed, the rules changed.
    const cleared = await call('PUT', full.key, { disclosure: null, redaction: { ...OFF, ibans: true } });
    expect(cleared.body).toMatchObject({ disclosure: null, redaction: { ...OFF, ibans: true } });

    // Recording (docs/features/recordings.md): on with a retention, then a body without it turns it off again.
    const recording = await call('PUT', full.key, { ...SETTINGS, recording: { enabled: true, retentionDays: 90 } });
    expect(recording.body).toMatchObject({ recording: { enabled: true, retentionDays: 90 } });
    expect((await call('GET', full.key)).body).toEqual(recording.body);
    expect((await call('GET', other.key)).body).toMatchObject({ recording: { enabled: false, retentionDays: null } });
    const kept = await call('PUT', full.key, { ...SETTINGS, recording: { enabled: true, retentionDays: null } });
    expect(kept.body).toMatchObject({ recording: { enabled: true, retentionDays: null } });
    expect((await call('PUT', full.key, SETTINGS)).body).toMatchObject({
      recording: { enabled: false, retentionDays: null },
    });
  });

  it('refuses bad input with 400 invalid_body and its issues, and nothing changes', async () => {
    const full = await createTestWorkspace(db);
    await call('PUT', full.key, SETTINGS);
    const before = await db.complianceSettings.findUniqueOrThrow({ where: { workspaceId: full.workspaceId } });
    for (const body of [
      {},
      { disclosure: 'Hi' },
      { ...SETTINGS, disclosure: '   ' },
      { ...SETTINGS, disclosure: 'x'.repeat(501) },
      { ...SETTINGS, disclosure: 'bell \u0007 here' },
      { ...SETTINGS, disclosure: 42 },
      { ...SETTINGS, redaction: { ...OFF, phoneNumbers: true } },
      { ...SETTINGS, redaction: { cardNumbers: true } },
      { ...SETTINGS, redaction: { ...OFF, ibans: 'yes' } },
      { ...SETTINGS, extra: 1 },
      { ...SETTINGS, recording: { enabled: true } },
      { ...SETTINGS, recording: { enabled: 'yes', retentionDays: null } },
      { ...SETTINGS, recording: { enabled: true, retentionDays: 0 } },
      { ...SETTINGS, recording: { enabled: true, retentionDays: 3651 } },
      { ...SETTINGS, recording: { enabled: true, retentionDays: 1.5 } },
      { ...SETTINGS, recording: { enabled: true, retentionDays: null, extra: 1 } },
      [],
    ]) {
      const refused = await call('PUT', full.key, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
      expect(Array.isArray(refused.body.issues)).toBe(true);
    }
    const raw = await api.request('PUT', '/v1/compliance', {
      key: full.key,
      headers: { 'content-type': 'application/json' },
      body: undefined,
    });
    expect(raw.status).toBe(400);
    expect(await db.complianceSettings.findUniqueOrThrow({ where: { workspaceId: full.workspaceId } })).toEqual(before);
    expect(before.disclosure).toBe('This call is recorded and handled by an AI assistant.');
    expect(await call('PUT', full.key, { ...SETTINGS, disclosure: 'x'.repeat(500) })).toMatchObject({ status: 200 });
  });

  it('needs calls.view to read and calls.edit to change them', async () => {
    const viewer = await createTestWorkspace(db, { scopes: ['calls.view'] });
    const editor = await createTestWorkspace(db, { scopes: ['calls.edit'] });
    const stranger = await createTestWorkspace(db, { scopes: ['agents.edit', 'workspace.view'] });
    expect((await call('GET', viewer.key)).status).toBe(200);
    expect((await call('GET', editor.key)).status).toBe(200);
    expect(await call('GET', stranger.key)).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'calls.view' },
    });
    for (const key of [viewer.key, stranger.key])
      expect(await call('PUT', key, SETTINGS)).toEqual({
        status: 403,
        body: { error: 'forbidden', requiredPermission: 'calls.edit' },
      });
    expect(
      await db.complianceSettings.count({
        where: { workspaceId: { in: [viewer.workspaceId, stranger.workspaceId] } },
      }),
    ).toBe(0);
    expect((await call('PUT', editor.key, SETTINGS)).status).toBe(200);
    expect((await api.request('GET', '/v1/compliance')).status).toBe(401);
  });
});
