import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashApiKeySecret } from '../lib/door/api-key-secret';
import { runAdminCli } from './support/admin-cli';
import { useTestDatabase } from './support/database';

const { db, url } = await useTestDatabase();
const admin = (...args: string[]) => runAdminCli(url, ...args);

async function adminJson(...args: string[]) {
  const result = await admin(...args);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, any>;
}

describe('npm run admin: journeys (workflow save, workflow publish)', () => {
  it('saves revisions of a journey from a file and publishes only a valid one', async () => {
    const workspace = await adminJson('workspace', 'create', '--name', 'Flows', '--features', 'workflows');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'workflow-'));
    const valid = path.join(dir, 'valid.json');
    const broken = path.join(dir, 'broken.json');
    const nodes = [
      { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
      { id: 'done', type: 'end', position: { x: 1, y: 0 }, data: {} },
    ];
    writeFileSync(
      valid,
      JSON.stringify({ definitionVersion: 1, nodes, edges: [{ id: 'e1', source: 'start', target: 'done' }] }),
    );
    writeFileSync(broken, JSON.stringify({ definition: { definitionVersion: 1, nodes, edges: [] } }));

    const created = await adminJson(
      'workflow',
      'save',
      '--workspace',
      workspace.id,
      '--name',
      'Welcome',
      '--file',
      broken,
    );
    expect(created).toMatchObject({
      name: 'Welcome',
      status: 'DRAFT',
      revision: 1,
      publishedRevision: null,
      problems: ['node "start" cannot reach an end node', 'node "done" is not reachable from the start node'],
    });
    const refused = await admin('workflow', 'publish', '--workspace', workspace.id, '--id', created.id);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(
      /^workflow_invalid: node "start" cannot reach an end node; node "done" is not reachable/,
    );
    const saved = await adminJson('workflow', 'save', '--workspace', workspace.id, '--id', created.id, '--file', valid);
    expect(saved).toMatchObject({ revision: 2, problems: [] });
    expect(await adminJson('workflow', 'publish', '--workspace', workspace.id, '--id', created.id)).toMatchObject({
      status: 'PUBLISHED',
      publishedRevision: 2,
    });
    expect(await db.journeyRevision.count({ where: { journeyId: created.id } })).toBe(2);
  });
});

describe('npm run admin', () => {
  it('creates and updates a workspace', async () => {
    const { id } = await adminJson(
      'workspace',
      'create',
      '--name',
      'Acme',
      '--plan',
      'basic',
      '--features',
      'workflows,d2c',
      '--status',
      'pending_approval',
      '--rate-limit',
      '300',
    );
    expect(await db.workspace.findUniqueOrThrow({ where: { id } })).toMatchObject({
      name: 'Acme',
      plan: 'basic',
      features: ['workflows', 'd2c'],
      status: 'pending_approval',
      rateLimitPerMinute: 300,
    });
    expect(await adminJson('workspace', 'set', '--workspace', id, '--status', 'approved', '--plan', 'ai')).toEqual({
      id,
    });
    expect(await db.workspace.findUniqueOrThrow({ where: { id } })).toMatchObject({
      status: 'approved',
      plan: 'ai',
      rateLimitPerMinute: 300,
    });
  });

  it('adds members, issues keys stored only as hashes, drops never-holdable scopes, and revokes', async () => {
    const { id: workspaceId } = await adminJson('workspace', 'create', '--name', 'Keys');
    const { id: memberId } = await adminJson(
      'member',
      'add',
      '--workspace',
      workspaceId,
      '--email',
      'ops@example.com',
      '--role',
      'admin',
    );
    const scoped = await adminJson(
      'key',
      'create',
      '--member',
      memberId,
      '--scopes',
      'campaigns.edit,team.manage,workflows.edit',
      '--expires-at',
      '2030-01-01T00:00:00Z',
    );
    expect(scoped.key).toMatch(/^wsk_/);
    const stored = await db.apiKey.findUniqueOrThrow({ where: { id: scoped.id } });
    expect(stored).toMatchObject({
      scoped: true,
      scopes: ['campaigns.edit'],
      secretHash: hashApiKeySecret(scoped.key),
    });
    expect(stored.expiresAt?.toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(JSON.stringify(stored)).not.toContain(scoped.key);

    const unscoped = await adminJson('key', 'create', '--member', memberId);
    expect(await db.apiKey.findUniqueOrThrow({ where: { id: unscoped.id } })).toMatchObject({
      scoped: false,
      scopes: [],
    });

    expect(await adminJson('key', 'revoke', '--key', scoped.id)).toEqual({ id: scoped.id });
    expect((await db.apiKey.findUniqueOrThrow({ where: { id: scoped.id } })).revokedAt).not.toBeNull();

    expect(await adminJson('member', 'set', '--member', memberId, '--role', 'viewer', '--status', 'suspended')).toEqual(
      { id: memberId },
    );
    expect(await db.member.findUniqueOrThrow({ where: { id: memberId } })).toMatchObject({
      role: 'viewer',
      status: 'suspended',
    });
  });

  it('grants credits and records each grant in the ledger', async () => {
    const { id } = await adminJson('workspace', 'create', '--name', 'Credits');
    expect(await adminJson('credits', 'grant', '--workspace', id, '--amount', '25.5')).toEqual({ balance: 25.5 });
    expect(await adminJson('credits', 'grant', '--workspace', id, '--amount', '10')).toEqual({ balance: 35.5 });
    expect(await db.creditLedgerEntry.count({ where: { workspaceId: id } })).toBe(2);
  });

  it.each([
    [['workspace', 'create'], /--name/],
    [['workspace', 'create', '--name', 'X', '--plan', 'gold'], /--plan/],
    [['workspace', 'create', '--name', 'X', '--features', 'workflows,teleport'], /--features/],
    [['workspace', 'create', '--name', 'X', '--colour', 'red'], /--colour: is not a flag/],
    [
      ['member', 'add', '--workspace', '00000000-0000-4000-8000-000000000000', '--email', 'a@b.co', '--role', 'owner'],
      /workspace .* not found/,
    ],
    [['member', 'add', '--workspace', 'nope', '--email', 'a@b.co', '--role', 'owner'], /--workspace/],
    [['key', 'create', '--member', '00000000-0000-4000-8000-000000000000', '--expires-at', 'tomorrow'], /--expires-at/],
    [['credits', 'grant', '--workspace', '00000000-0000-4000-8000-000000000000', '--amount', '-5'], /--amount/],
    [['teleport', 'now'], /unknown command/],
  ])('refuses %j with a one-line message and a non-zero exit', async (args, message) => {
    const before = await db.workspace.count();
    const result = await admin(...args);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(message);
    expect(await db.workspace.count()).toBe(before);
  });
});
