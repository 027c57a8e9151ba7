import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CALL_ISSUE_CATEGORY_NAMES, CALL_ISSUE_LIMITS } from '../../lib/calls/issue-categories';
import type { Transcript } from '../../lib/calls/transcript';
import { startTestApi } from '../support/api';
import { insertAnsweredCall } from '../support/calls';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });

const editor = await createTestWorkspace(db, { scopes: ['calls.edit'] });
const reader = await createTestWorkspace(db, { scopes: ['calls.view'] });
const stranger = await createTestWorkspace(db, { scopes: ['calls.edit'] });

async function send(method: string, path: string, key: string, body?: unknown) {
  const response = await api.request(method, path, { key, body });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as any };
}

const TRANSCRIPT: Transcript = [
  { speaker: 'agent', text: 'Hello, this is Ada from Acme. Is this a good time?', offsetMs: 0 },
  { speaker: 'lead', text: 'Yes, go ahead.', offsetMs: 3_200 },
];
// The stored shape of lib/call-intelligence/call-intelligence.ts.
const INTELLIGENCE = {
  extraction: {
    interested: { value: true, confidence: 0.9, evidence: 'Yes, go ahead.' },
    callbackDate: { value: null, confidence: 0, evidence: null },
  },
  evaluation: {
    score: 80,
    reasons: [{ rule: 'questions_asked', points: 25, maxPoints: 25, detail: '1 of 1 questions asked' }],
  },
  provider: 'rule-based',
  computedAt: '2026-11-23T01:00:00.000Z',
  jobId: 'call-intelligence-example',
};

const answered = await insertAnsweredCall(db, editor, {
  carrierStatus: 'completed',
  answeredBy: 'human',
  fromNumber: '+14155550100',
  agentId: randomUUID(),
  transcript: TRANSCRIPT,
  intelligence: INTELLIGENCE,
});

describe('GET /calls/{id}', () => {
  it('answers the summary GET /calls lists, with the carrier state, transcript, intelligence, translations and issues', async () => {
    await db.callTranslation.create({
      data: {
        callId: answered.id,
        language: 'es',
        sourceLanguage: 'en',
        provider: 'apertium 3.8.3 eng-spa (apertium-eng-spa 0.8.1-2)',
        turns: TRANSCRIPT.map((turn) => ({ ...turn, text: `es: ${turn.text}` })),
        createdAt: new Date('2026-11-23T01:02:00.000Z'),
      },
    });
    const reported = await send('POST', `/calls/${answered.id}/issues`, editor.key, {
      category: 'wrong_outcome',
      note: 'It was a voicemail.',
    });
    expect(reported.status).toBe(201);

    const listed = (await send('GET', '/calls', editor.key)).body.items.find((call: any) => call.id === answered.id);
    const { status, body } = await send('GET', `/calls/${answered.id}`, editor.key);
    expect(status).toBe(200);
    expect(body).toEqual({
      ...listed,
      carrierStatus: 'completed',
      answeredBy: 'human',
      fromNumber: '+14155550100',
      agentId: answered.agentId,
      transcript: TRANSCRIPT,
      intelligence: INTELLIGENCE,
      translations: [
        {
          language: 'es',
          provider: 'apertium 3.8.3 eng-spa (apertium-eng-spa 0.8.1-2)',
          createdAt: '2026-11-23T01:02:00.000Z',
        },
      ],
      issues: [reported.body],
      recording: null,
      // No custom function was called (docs/features/functions.md).
      functionCalls: [],
      // No transfer was asked (docs/features/conversation/tools.md#warm-transfer).
      transfer: null,
    });
    expect(listed).toMatchObject({ id: answered.id, phone: '+14155550120', outcome: 'answered', durationMs: 41_000 });
  });

  it('answers null details for a call with none (not answered, synchronous path)', async () => {
    const busy = await insertAnsweredCall(db, editor, { outcome: 'busy', durationMs: null });
    expect((await send('GET', `/calls/${busy.id}`, editor.key)).body).toMatchObject({
      carrierStatus: null,
      answeredBy: null,
      fromNumber: null,
      agentId: null,
      transcript: null,
      intelligence: null,
      translations: [],
      issues: [],
      // Not recorded (docs/features/recordings.md).
      recording: null,
    });
  });

  it("refuses an unknown id, a non-UUID id and another workspace's call alike, telling nothing", async () => {
    const refusals = await Promise.all(
      [answered.id, randomUUID(), 'not-a-uuid', answered.id.toUpperCase().replace(/.$/, 'Z')].map((id) =>
        send('GET', `/calls/${id}`, stranger.key),
      ),
    );
    for (const refusal of refusals) expect(refusal).toEqual({ status: 403, body: { error: 'forbidden' } });
    expect(await send('GET', `/calls/${answered.id}/issues`, stranger.key)).toEqual({
      status: 403,
      body: { error: 'forbidden' },
    });
  });

  it('needs calls.view', async () => {
    const campaigns = await createTestWorkspace(db, { scopes: ['campaigns.view'] });
    expect(await send('GET', `/calls/${randomUUID()}`, campaigns.key)).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'calls.view' },
    });
  });
});

describe('POST /calls/{id}/issues', () => {
  it('records the issue with the key and member that reported it, listed oldest first', async () => {
    const call = await insertAnsweredCall(db, editor);
    const first = await send('POST', `/calls/${call.id}/issues`, editor.key, { category: 'transcript_error' });
    const second = await send('POST', `/calls/${call.id}/issues`, editor.key, {
      category: 'other',
      note: 'The lead asked to be called in Portuguese.',
    });
    expect(first).toEqual({
      status: 201,
      body: {
        id: expect.any(String),
        category: 'transcript_error',
        note: '',
        reportedBy: { keyId: editor.keyId, memberId: editor.memberId },
        createdAt: expect.any(String),
      },
    });
    expect(second.body).toMatchObject({ category: 'other', note: 'The lead asked to be called in Portuguese.' });
    const listed = await send('GET', `/calls/${call.id}/issues`, editor.key);
    expect(listed).toEqual({ status: 200, body: [first.body, second.body] });
    expect((await send('GET', `/calls/${call.id}`, editor.key)).body.issues).toEqual([first.body, second.body]);
    const stored = await db.callIssue.findMany({ where: { callId: call.id } });
    expect(stored.map((issue) => [issue.workspaceId, issue.reportedByKeyId])).toEqual([
      [editor.workspaceId, editor.keyId],
      [editor.workspaceId, editor.keyId],
    ]);
  });

  it('takes every documented category', async () => {
    const call = await insertAnsweredCall(db, editor);
    for (const category of CALL_ISSUE_CATEGORY_NAMES) {
      const reported = await send('POST', `/calls/${call.id}/issues`, editor.key, { category, note: 'Seen.' });
      expect([reported.status, reported.body.category]).toEqual([201, category]);
    }
  });

  it('refuses a bad body with 400 invalid_body and stores nothing', async () => {
    const call = await insertAnsweredCall(db, editor);
    const bad: Array<[unknown, string]> = [
      [{ category: 'bad_weather', note: 'x' }, 'category'],
      [{ note: 'no category' }, 'category'],
      [{ category: 'other' }, 'note'],
      [{ category: 'other', note: '   ' }, 'note'],
      [{ category: 'compliance', note: 'é'.repeat(CALL_ISSUE_LIMITS.noteLength + 1) }, 'note'],
      [{ category: 'compliance', note: 42 }, 'note'],
      [{ category: 'compliance', severity: 'high' }, ''],
    ];
    for (const [body, path] of bad) {
      const refused = await send('POST', `/calls/${call.id}/issues`, editor.key, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
      expect(refused.body.issues.map((issue: any) => issue.path.join('.'))).toContain(path);
    }
    expect(await db.callIssue.count({ where: { callId: call.id } })).toBe(0);
    // A note of exactly the limit in code points is taken (2,000 astral characters are 4,000 UTF-16 units).
    const longest = await send('POST', `/calls/${call.id}/issues`, editor.key, {
      category: 'compliance',
      note: '😀'.repeat(CALL_ISSUE_LIMITS.noteLength),
    });
    expect(longest.status).toBe(201);
  });

  it('is refused to a key with calls.view alone (a key needs calls.edit) and to a viewer-role member', async () => {
    expect(
      await send('POST', `/calls/${answered.id}/issues`, reader.key, { category: 'compliance', note: 'x' }),
    ).toEqual({ status: 403, body: { error: 'forbidden', requiredPermission: 'calls.edit' } });
    // The key holds calls.edit, but its member's role (viewer) does not: the key is narrowed to calls.view.
    const viewer = await createTestWorkspace(db, { scopes: ['calls.edit'], role: 'viewer' });
    const viewersCall = await insertAnsweredCall(db, viewer);
    expect(await send('POST', `/calls/${viewersCall.id}/issues`, viewer.key, { category: 'other', note: 'x' })).toEqual(
      {
        status: 403,
        body: { error: 'forbidden', requiredPermission: 'calls.edit' },
      },
    );
    expect((await send('GET', `/calls/${viewersCall.id}`, viewer.key)).status).toBe(200);
    // A manager's role includes calls.edit.
    const manager = await createTestWorkspace(db, { scopes: ['calls.edit'], role: 'manager' });
    const managersCall = await insertAnsweredCall(db, manager);
    expect(
      (await send('POST', `/calls/${managersCall.id}/issues`, manager.key, { category: 'other', note: 'x' })).status,
    ).toBe(201);
    expect(
      await db.callIssue.count({ where: { callId: { in: [answered.id, viewersCall.id] }, category: 'compliance' } }),
    ).toBe(0);
    expect(await db.callIssue.count({ where: { callId: viewersCall.id } })).toBe(0);
  });

  it("refuses another workspace's call, an unknown and a non-UUID id with the same 403, storing nothing", async () => {
    const before = await db.callIssue.count();
    for (const id of [answered.id, randomUUID(), 'nope']) {
      expect(await send('POST', `/calls/${id}/issues`, stranger.key, { category: 'other', note: 'x' })).toEqual({
        status: 403,
        body: { error: 'forbidden' },
      });
    }
    expect(await db.callIssue.count()).toBe(before);
  });

  it(`holds at most ${CALL_ISSUE_LIMITS.issuesPerCall} issues per call, under concurrent reports too`, async () => {
    const call = await insertAnsweredCall(db, editor);
    const limit = CALL_ISSUE_LIMITS.issuesPerCall;
    await db.callIssue.createMany({
      data: Array.from({ length: limit - 3 }, () => ({
        workspaceId: editor.workspaceId,
        callId: call.id,
        category: 'audio_quality',
        reportedByKeyId: editor.keyId,
        reportedByMemberId: editor.memberId,
      })),
    });
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        send('POST', `/calls/${call.id}/issues`, editor.key, { category: 'agent_behaviour' }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
    expect(answers.find((answer) => answer.status === 409)!.body).toEqual({
      error: 'call_issue_limit_reached',
      detail: `a call holds at most ${limit} issues; this one holds as many`,
    });
    expect(await db.callIssue.count({ where: { callId: call.id } })).toBe(limit);
    expect((await send('GET', `/calls/${call.id}/issues`, editor.key)).body).toHaveLength(limit);
    // The cap is per call: another call of the workspace still takes issues.
    const other = await insertAnsweredCall(db, editor);
    expect((await send('POST', `/calls/${other.id}/issues`, editor.key, { category: 'compliance' })).status).toBe(201);
  });
});
