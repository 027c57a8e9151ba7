import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { scorecardOf, SPEECH_TEAMS_PER_WORKSPACE } from '../../api/speech/speech-people';
import { scorecardSchema } from '../../lib/speech/scorecard';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const ALL_SCOPES = ['speech.edit', 'speech.delete'];
const owner = await createTestWorkspace(db, { scopes: ALL_SCOPES });
const other = await createTestWorkspace(db, { scopes: ALL_SCOPES });

interface TeamBody {
  id: string;
  name: string;
  repCount: number;
  createdAt: string;
}
interface RepBody {
  id: string;
  name: string;
  email: string | null;
  teamId: string | null;
  createdAt: string;
}
interface ErrorBody {
  error: string;
  issues?: Array<{ path: Array<string | number>; message: string }>;
  requiredPermission?: string;
}

async function call<T>(method: string, path: string, body?: unknown, who: TestWorkspace = owner) {
  const response = await api.request(method, path, { key: who.key, body });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

async function newTeam(name: string, who?: TestWorkspace) {
  const response = await call<TeamBody>('POST', '/speech/teams', { name }, who);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}
async function newRep(body: Record<string, unknown>, who?: TestWorkspace) {
  const response = await call<RepBody>('POST', '/speech/reps', body, who);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}
const readTeam = (id: string, who?: TestWorkspace) => call<TeamBody>('GET', `/speech/teams/${id}`, undefined, who);
const readRep = (id: string, who?: TestWorkspace) => call<RepBody>('GET', `/speech/reps/${id}`, undefined, who);
const issuePaths = (body: ErrorBody) => body.issues?.map((issue) => issue.path.join('.'));

const FORBIDDEN = { status: 403, body: { error: 'forbidden' } };

describe('speech teams', () => {
  it('creates with a trimmed name, reads it, lists all oldest first with rep counts', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ALL_SCOPES });
    const first = await newTeam('  North  ', workspace);
    expect(Object.keys(first).sort()).toEqual(['createdAt', 'id', 'name', 'repCount']);
    expect(first).toMatchObject({ name: 'North', repCount: 0 });
    expect(await readTeam(first.id, workspace)).toEqual({ status: 200, body: first });
    const second = await newTeam('South', workspace);
    await newRep({ name: 'Ann', teamId: second.id }, workspace);
    await newRep({ name: 'Bob', teamId: second.id }, workspace);
    await newTeam('Elsewhere');
    const list = await call<TeamBody[]>('GET', '/speech/teams', undefined, workspace);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([first, { ...second, repCount: 2 }]);
  });

  it('refuses a name another team of the workspace holds with 409, not one of another workspace', async () => {
    const taken = await newTeam('Closers');
    const again = await call<ErrorBody>('POST', '/speech/teams', { name: ' Closers ' });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('speech_team_name_taken');
    await newTeam('Closers', other);
    const renamed = await newTeam('Openers');
    const clash = await call<ErrorBody>('PATCH', `/speech/teams/${renamed.id}`, { name: 'Closers' });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toBe('speech_team_name_taken');
    expect((await readTeam(renamed.id)).body.name).toBe('Openers');
    expect((await readTeam(taken.id)).body.name).toBe('Closers');
  });

  it('renames; refuses an empty, overlong or unknown field with 400 invalid_body', async () => {
    const team = await newTeam('Renamable');
    const renamed = await call<TeamBody>('PATCH', `/speech/teams/${team.id}`, { name: 'Renamed' });
    expect(renamed).toEqual({ status: 200, body: { ...team, name: 'Renamed' } });
    for (const body of [{ name: '   ' }, { name: 'x'.repeat(101) }, { name: 'Ok', colour: 'red' }, {}]) {
      const refused = await call<ErrorBody>('POST', '/speech/teams', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
    }
    expect(await db.speechTeam.count({ where: { workspaceId: owner.workspaceId, name: 'Ok' } })).toBe(0);
  });

  it('deletes a team: 204, its reps stay without a team, the id is then refused like an unknown one', async () => {
    const team = await newTeam('Doomed');
    const rep = await newRep({ name: 'Stays', teamId: team.id });
    expect((await call('DELETE', `/speech/teams/${team.id}`)).status).toBe(204);
    expect(await db.speechTeam.findUnique({ where: { id: team.id } })).toBeNull();
    expect(await readRep(rep.id)).toEqual({ status: 200, body: { ...rep, teamId: null } });
    for (const method of ['GET', 'DELETE']) expect(await call(method, `/speech/teams/${team.id}`)).toEqual(FORBIDDEN);
    expect(await call('PATCH', `/speech/teams/${team.id}`, { name: 'Back' })).toEqual(FORBIDDEN);
  });

  it(`holds at most ${SPEECH_TEAMS_PER_WORKSPACE} teams per workspace (409 speech_team_limit_reached)`, async () => {
    const full = await createTestWorkspace(db, { scopes: ALL_SCOPES });
    await db.speechTeam.createMany({
      data: Array.from({ length: SPEECH_TEAMS_PER_WORKSPACE - 1 }, (_, i) => ({
        workspaceId: full.workspaceId,
        name: `Team ${i}`,
      })),
    });
    await newTeam('Last', full);
    const refused = await call<ErrorBody>('POST', '/speech/teams', { name: 'One too many' }, full);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('speech_team_limit_reached');
    expect(await db.speechTeam.count({ where: { workspaceId: full.workspaceId } })).toBe(SPEECH_TEAMS_PER_WORKSPACE);
    expect((await call<TeamBody[]>('GET', '/speech/teams', undefined, full)).body).toHaveLength(
      SPEECH_TEAMS_PER_WORKSPACE,
    );
  });
});

describe('speech reps', () => {
  it('creates with documented defaults, reads, and answers exactly the rep object', async () => {
    const team = await newTeam('Reps team');
    const minimal = await newRep({ name: '  Dana  ' });
    expect(Object.keys(minimal).sort()).toEqual(['createdAt', 'email', 'id', 'name', 'teamId']);
    expect(minimal).toMatchObject({ name: 'Dana', email: null, teamId: null });
    const full = await newRep({ name: 'Eve', email: 'eve@example.com', teamId: team.id });
    expect(full).toMatchObject({ name: 'Eve', email: 'eve@example.com', teamId: team.id });
    expect(await readRep(full.id)).toEqual({ status: 200, body: full });
    const stored = await db.speechRep.findUniqueOrThrow({ where: { id: full.id } });
    expect(stored.workspaceId).toBe(owner.workspaceId);
  });

  it('refuses a team that is not one of the workspace at teamId, and a bad email, creating nothing', async () => {
    const theirs = await newTeam('Their team', other);
    for (const teamId of [theirs.id, randomUUID(), 'not-a-uuid']) {
      const refused = await call<ErrorBody>('POST', '/speech/reps', { name: 'Nobody', teamId });
      expect(refused.status, teamId).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
      expect(issuePaths(refused.body)).toEqual(['teamId']);
    }
    const badEmail = await call<ErrorBody>('POST', '/speech/reps', { name: 'Nobody', email: 'not an email' });
    expect(badEmail.status).toBe(400);
    expect(issuePaths(badEmail.body)).toEqual(['email']);
    for (const body of [{ name: '' }, { name: 'x'.repeat(201) }, { name: 'Nobody', extra: 1 }]) {
      expect((await call('POST', '/speech/reps', body)).status, JSON.stringify(body)).toBe(400);
    }
    expect(await db.speechRep.count({ where: { name: 'Nobody' } })).toBe(0);
    expect((await readTeam(theirs.id, other)).body.repCount).toBe(0);
  });

  it('changes only the fields given; null clears email and teamId; a foreign team changes nothing', async () => {
    const [a, b] = [await newTeam('Team A'), await newTeam('Team B')];
    const rep = await newRep({ name: 'Fay', email: 'fay@example.com', teamId: a.id });
    const moved = await call<RepBody>('PATCH', `/speech/reps/${rep.id}`, { teamId: b.id });
    expect(moved).toEqual({ status: 200, body: { ...rep, teamId: b.id } });
    const renamed = await call<RepBody>('PATCH', `/speech/reps/${rep.id}`, { name: 'Faye' });
    expect(renamed.body).toEqual({ ...rep, name: 'Faye', teamId: b.id });
    const cleared = await call<RepBody>('PATCH', `/speech/reps/${rep.id}`, { email: null, teamId: null });
    expect(cleared.body).toEqual({ ...rep, name: 'Faye', email: null, teamId: null });
    const theirs = await newTeam('Not yours', other);
    for (const teamId of [theirs.id, randomUUID()]) {
      const refused = await call<ErrorBody>('PATCH', `/speech/reps/${rep.id}`, { name: 'Gone', teamId });
      expect(refused.status, teamId).toBe(400);
      expect(issuePaths(refused.body)).toEqual(['teamId']);
    }
    expect((await readRep(rep.id)).body).toEqual(cleared.body);
    expect((await call('PATCH', `/speech/reps/${rep.id}`, {})).status).toBe(400);
  });

  it('lists newest first, by offset with total, filtered by team', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ALL_SCOPES });
    const team = await newTeam('Filtered', workspace);
    const reps: RepBody[] = [];
    for (let i = 0; i < 5; i++)
      reps.push(await newRep({ name: `Rep ${i}`, ...(i % 2 ? { teamId: team.id } : {}) }, workspace));
    await newRep({ name: 'Elsewhere' });
    const newestFirst = [...reps].reverse();
    const page = (query: string) =>
      call<{ items: RepBody[]; total: number }>('GET', `/speech/reps${query}`, undefined, workspace);
    expect((await page('')).body).toEqual({ items: newestFirst, total: 5 });
    expect((await page('?limit=2&offset=1')).body).toEqual({ items: newestFirst.slice(1, 3), total: 5 });
    expect((await page(`?teamId=${team.id}`)).body).toEqual({
      items: newestFirst.filter((rep) => rep.teamId === team.id),
      total: 2,
    });
    expect((await page(`?teamId=${randomUUID()}`)).body).toEqual({ items: [], total: 0 });
    for (const query of ['?limit=0', '?limit=201', '?offset=-1', '?teamId=nope']) {
      const refused = await call<ErrorBody>('GET', `/speech/reps${query}`, undefined, workspace);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
    }
  });

  it('deletes a rep: 204, its analyses stay without a rep, the id is then refused', async () => {
    const rep = await newRep({ name: 'Leaving' });
    const analysis = await db.speechCall.create({
      data: {
        workspaceId: owner.workspaceId,
        repId: rep.id,
        language: 'en-US',
        mediaType: 'audio/wav',
        byteSize: 44,
        durationMs: 1000,
        scorecard: scorecardSchema.parse({}),
        workflowId: `speech-test-${randomUUID()}`,
      },
    });
    expect((await call('DELETE', `/speech/reps/${rep.id}`)).status).toBe(204);
    expect(await db.speechRep.findUnique({ where: { id: rep.id } })).toBeNull();
    expect((await db.speechCall.findUniqueOrThrow({ where: { id: analysis.id } })).repId).toBeNull();
    for (const method of ['GET', 'DELETE']) expect(await call(method, `/speech/reps/${rep.id}`)).toEqual(FORBIDDEN);
  });
});

describe('speech people: workspaces and scopes', () => {
  it("answers another workspace's team or rep exactly like an unknown or malformed id, and leaves it alone", async () => {
    const team = await newTeam('Secret team');
    const rep = await newRep({ name: 'Secret rep', teamId: team.id });
    for (const [kind, id, patch] of [
      ['teams', team.id, { name: 'Stolen' }],
      ['reps', rep.id, { name: 'Stolen' }],
      ['teams', randomUUID(), { name: 'Stolen' }],
      ['reps', 'not-a-uuid', { name: 'Stolen' }],
      ['teams', 'not-a-uuid', { name: 'Stolen' }],
    ] as const) {
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', patch],
        ['DELETE', undefined],
      ] as const) {
        const response = await call<ErrorBody>(method, `/speech/${kind}/${id}`, body, other);
        expect(response, `${method} ${kind} ${id}`).toEqual(FORBIDDEN);
      }
    }
    // The rep is judged before the team it would move to: 403, not 400.
    const theirTeam = await newTeam('Their own', other);
    expect(await call('PATCH', `/speech/reps/${rep.id}`, { teamId: theirTeam.id }, other)).toEqual(FORBIDDEN);
    expect((await readTeam(team.id)).body).toMatchObject({ name: 'Secret team', repCount: 1 });
    expect((await readRep(rep.id)).body).toEqual(rep);
    const theirReps = await call<{ items: RepBody[] }>('GET', '/speech/reps?limit=200', undefined, other);
    expect(theirReps.body.items.map((item) => item.id)).not.toContain(rep.id);
  });

  it('needs speech.view to read, speech.edit to write, speech.delete to delete; speech.upload reads', async () => {
    const team = await newTeam('Scoped');
    const rep = await newRep({ name: 'Scoped rep' });
    const viewer = await createTestWorkspace(db, { scopes: ['speech.view'] });
    const uploader = await createTestWorkspace(db, { scopes: ['speech.upload'] });
    for (const who of [viewer, uploader]) {
      for (const path of ['/speech/teams', '/speech/reps', '/speech/scorecard'])
        expect((await call('GET', path, undefined, who)).status, path).toBe(200);
    }
    const needsEdit = { status: 403, body: { error: 'forbidden', requiredPermission: 'speech.edit' } };
    for (const who of [viewer, uploader]) {
      expect(await call('POST', '/speech/teams', { name: 'No' }, who)).toEqual(needsEdit);
      expect(await call('POST', '/speech/reps', { name: 'No' }, who)).toEqual(needsEdit);
      expect(await call('PUT', '/speech/scorecard', { keywords: ['no'] }, who)).toEqual(needsEdit);
    }
    const editor = await createTestWorkspace(db, { scopes: ['speech.edit'] });
    const ownTeam = await newTeam('Editor team', editor);
    const ownRep = await newRep({ name: 'Editor rep', teamId: ownTeam.id }, editor);
    expect((await readTeam(ownTeam.id, editor)).status).toBe(200);
    const needsDelete = { status: 403, body: { error: 'forbidden', requiredPermission: 'speech.delete' } };
    expect(await call('DELETE', `/speech/teams/${ownTeam.id}`, undefined, editor)).toEqual(needsDelete);
    expect(await call('DELETE', `/speech/reps/${ownRep.id}`, undefined, editor)).toEqual(needsDelete);
    expect(await db.speechTeam.count({ where: { id: { in: [team.id, ownTeam.id] } } })).toBe(2);
    expect(await db.speechRep.count({ where: { id: { in: [rep.id, ownRep.id] } } })).toBe(2);
  });
});

describe('speech scorecard', () => {
  it('answers the defaults with updatedAt null until one is put, then what was put, defaults filled', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ALL_SCOPES });
    const defaults = scorecardSchema.parse({});
    expect(await call('GET', '/speech/scorecard', undefined, workspace)).toEqual({
      status: 200,
      body: { ...defaults, updatedAt: null },
    });
    expect(await scorecardOf(db, workspace.workspaceId)).toEqual(defaults);

    const put = await call<Record<string, unknown>>(
      'PUT',
      '/speech/scorecard',
      { keywords: [' price '], weights: { keywords: 80 }, targets: { maxSilenceMs: 5000 } },
      workspace,
    );
    expect(put.status).toBe(200);
    const expected = {
      ...defaults,
      keywords: ['price'],
      weights: { ...defaults.weights, keywords: 80 },
      targets: { ...defaults.targets, maxSilenceMs: 5000 },
    };
    expect(put.body).toEqual({ ...expected, updatedAt: expect.any(String) });
    expect(await call('GET', '/speech/scorecard', undefined, workspace)).toEqual({ status: 200, body: put.body });
    expect(await scorecardOf(db, workspace.workspaceId)).toEqual(expected);
    // Another workspace's stays the defaults.
    expect((await call<{ updatedAt: null }>('GET', '/speech/scorecard', undefined, other)).body.updatedAt).toBeNull();

    // A second PUT replaces the whole scorecard: what it leaves out goes back to its default.
    const replaced = await call<Record<string, unknown>>(
      'PUT',
      '/speech/scorecard',
      { phrases: ['free trial'] },
      workspace,
    );
    expect(replaced.body).toEqual({ ...defaults, phrases: ['free trial'], updatedAt: expect.any(String) });
    expect(await scorecardOf(db, workspace.workspaceId)).toEqual({ ...defaults, phrases: ['free trial'] });
  });

  it('refuses a bad scorecard or an unknown key anywhere with 400 invalid_body, changing nothing', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ALL_SCOPES });
    const kept = await call<Record<string, unknown>>('PUT', '/speech/scorecard', { keywords: ['kept'] }, workspace);
    expect(kept.status).toBe(200);
    for (const [body, path] of [
      [{ targets: { minWordsPerMinute: 200, maxWordsPerMinute: 150 } }, 'targets.minWordsPerMinute'],
      [{ weights: { keywords: -1 } }, 'weights.keywords'],
      [{ keywords: ['!!!'] }, 'keywords.0'],
      [{ keywrods: ['typo'] }, ''],
      [{ weights: { keyword: 50 } }, 'weights'],
      [{ targets: { maxSilence: 50 } }, 'targets'],
    ] as const) {
      const refused = await call<ErrorBody>('PUT', '/speech/scorecard', body, workspace);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
      expect(issuePaths(refused.body), JSON.stringify(body)).toEqual([path]);
    }
    expect(await call('GET', '/speech/scorecard', undefined, workspace)).toEqual({ status: 200, body: kept.body });
  });
});
