import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { routes } from '../../api/routes';
import type { RouteDefinition } from '../../api/http/route';
import { withIncludedPermissions, HOLDABLE_SCOPES, NEVER_HOLDABLE_SCOPES } from '../../lib/door/permissions';
import { addMember, createApiKey, createWorkspace, revokeApiKey, updateMember } from '../../lib/door/workspace-admin';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startTestWorker, useTemporalClient } from '../support/temporal';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
// Campaign transitions are Updates answered by the campaign's workflow: a real worker runs it.
const api = await startTestApi({ db, url, temporal, trustProxy: true });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(await startTestCarrier(db), api) });

// --- The cast: one workspace with every kind of key, and the workspaces around it. -------------------
const UNLIMITED = { rateLimitPerMinute: 1_000_000 };
const { id: workspaceId } = await createWorkspace(db, 'Matrix', {
  plan: 'ai',
  features: ['workflows', 'd2c'],
  ...UNLIMITED,
});
const owner = (await addMember(db, workspaceId, 'owner@matrix.test', 'owner')).id;
const viewer = (await addMember(db, workspaceId, 'viewer@matrix.test', 'viewer')).id;
const suspended = (await addMember(db, workspaceId, 'suspended@matrix.test', 'owner')).id;
const removed = (await addMember(db, workspaceId, 'removed@matrix.test', 'owner')).id;

const keyFor = async (memberId: string, scopes?: string[], expiresAt?: Date) =>
  (await createApiKey(db, memberId, { scopes, expiresAt })).key;
const fullKey = await keyFor(owner, [...HOLDABLE_SCOPES]);
const unscopedKey = await keyFor(owner);
const neverHoldableKey = await keyFor(owner, [...NEVER_HOLDABLE_SCOPES]);
const expiredKey = await keyFor(owner, [...HOLDABLE_SCOPES], new Date(Date.now() - 1_000));
const revokedKey = await createApiKey(db, owner, { scopes: [...HOLDABLE_SCOPES] });
await revokeApiKey(db, revokedKey.id);
const suspendedOwnerKey = await keyFor(suspended, [...HOLDABLE_SCOPES]);
const removedOwnerKey = await keyFor(removed, [...HOLDABLE_SCOPES]);
await updateMember(db, suspended, { status: 'suspended' });
await updateMember(db, removed, { status: 'removed' });

async function workspaceWithKey(settings: Parameters<typeof createWorkspace>[2]) {
  const { id } = await createWorkspace(db, 'Around', { ...UNLIMITED, ...settings });
  const campaign = await db.campaign.create({ data: { workspaceId: id, name: 'Around', acceptsLeadPush: true } });
  return {
    key: await keyFor((await addMember(db, id, 'owner@around.test', 'owner')).id, [...HOLDABLE_SCOPES]),
    campaignId: campaign.id,
  };
}
const pendingWorkspaceKey = (await workspaceWithKey({ status: 'pending_approval' })).key;
const suspendedWorkspaceKey = (await workspaceWithKey({ status: 'suspended' })).key;
const noPlan = await workspaceWithKey({ plan: 'none', features: [] });

const { id: otherWorkspaceId } = await createWorkspace(db, 'Other', UNLIMITED);
const otherCampaign = await db.campaign.create({
  data: { workspaceId: otherWorkspaceId, name: 'Secret name', acceptsLeadPush: true },
});

const keysByScope = new Map<string, string>();
async function keyWith(scope: string, memberId = owner) {
  const cacheKey = `${memberId}:${scope}`;
  if (!keysByScope.has(cacheKey)) keysByScope.set(cacheKey, await keyFor(memberId, [scope]));
  return keysByScope.get(cacheKey)!;
}

// --- Requests -------------------------------------------------------------------------------------
const campaignPath = (path: string) => /^\/(v1\/)?campaigns\/\{|^\/whatsapp\/campaigns\/\{/.test(path);

function concretePath(route: RouteDefinition, campaignId: string = randomUUID()) {
  return route.path.replace(/\{(\w+)\}/g, (_match, name: string) =>
    (name === 'id' || name === 'campaignId') && campaignPath(route.path)
      ? campaignId
      : name === 'phone'
        ? '%2B14155550100'
        : randomUUID(),
  );
}

/** Bodies that pass validation, so that a cell shows what the door decided and not the validator. */
const VALID_BODIES: Record<string, unknown> = {
  '/v1/campaigns/{campaignId}/leads': { lead: { phone: '+14155550120' }, idempotencyKey: 'matrix' },
  '/v1/campaigns/{campaignId}/leads/batch': { leads: [{ lead: { phone: '+14155550120' }, idempotencyKey: 'matrix' }] },
  '/campaigns/{id}': { name: 'Renamed' },
  '/agents': { name: 'Matrix', language: 'en-US', voiceId: 'espeak-ng/en-us', script: { openingLine: 'Hello' } },
  '/agents/{id}': { name: 'Renamed' },
  '/agents/{id}/documents': { documentIds: [] },
  '/campaigns/{id}/contacts': { contacts: [{ phone: '+14155550120' }] },
  '/campaigns/{id}/chat/stream': { message: 'How is the campaign doing?' },
  '/campaigns/{id}/sheet': { intervalSeconds: 60 },
  '/campaigns/{id}/import-from-crm': { connectionId: '00000000-0000-4000-8000-000000000003' },
  '/crm/connections/{id}/order-notifications': { rules: [] },
  '/dictionaries': { name: 'Matrix' },
  '/dictionaries/{id}': { name: 'Renamed' },
  '/calls/{id}/issues': { category: 'other', note: 'Matrix' },
  '/calls/{id}/transcript-translation': { language: 'es' },
  '/whatsapp/campaigns/{id}': {
    senderId: '00000000-0000-4000-8000-000000000001',
    templateId: '00000000-0000-4000-8000-000000000002',
    variables: {},
    sendingWindow: { start: '09:00', end: '17:00', days: [1] },
  },
};

let clientAddress = 0;
async function call(
  route: RouteDefinition,
  options: { key?: string; authorization?: string; campaignId?: string } = {},
) {
  // A campaign of its own for each request: deleting, stopping or editing one leaves the others alone.
  if (campaignPath(route.path) && !options.campaignId) {
    options = {
      ...options,
      campaignId: (await db.campaign.create({ data: { workspaceId, name: 'Cell', acceptsLeadPush: true } })).id,
    };
  }
  const headers: Record<string, string> = {
    // Each cell from its own address: the failed-authentication throttle has a test of its own.
    'x-forwarded-for': `10.${(clientAddress >> 16) & 255}.${(clientAddress >> 8) & 255}.${clientAddress++ & 255}`,
  };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  const hasBody = ['post', 'put', 'patch'].includes(route.method);
  const response = await api.request(route.method.toUpperCase(), concretePath(route, options.campaignId), {
    key: options.key,
    headers,
    body: hasBody ? (VALID_BODIES[route.path] ?? {}) : undefined,
  });
  const text = await response.text();
  // A file answer (an inline export) is past the door: there is no error body to read.
  const json = text && response.headers.get('content-type')?.startsWith('application/json');
  return {
    status: response.status,
    body: (json ? JSON.parse(text) : {}) as Record<string, unknown>,
    headers: response.headers,
  };
}

type Outcome = { status: number; error: string; requiredPermission?: string } | 'passes';
const DOOR_ERRORS = [
  'unauthorized',
  'invalid_api_key',
  'api_key_owner_inactive',
  'forbidden',
  'workspace_pending_approval',
  'workspace_suspended',
  'api_key_not_scoped',
  'api_key_not_allowed',
  'rate_limited',
  'plan_required',
  'feature_not_enabled',
];

function expectOutcome(
  actual: { status: number; body: Record<string, unknown>; headers: Headers },
  expected: Outcome,
  label: string,
) {
  // Every answer of the door carries the limit it applied: the key's, or the client address's.
  expect(actual.headers.get('ratelimit'), label).toMatch(/^limit=\d+, remaining=\d+, reset=\d+$/);
  expect(actual.headers.get('ratelimit-policy'), label).toMatch(/^\d+;w=60$/);
  if (expected === 'passes') {
    // Past the door, an id that is not the workspace's is still 403 forbidden, but without requiredPermission.
    const resourceRefusal = actual.body.error === 'forbidden' && actual.body.requiredPermission === undefined;
    if (!resourceRefusal)
      expect(DOOR_ERRORS, `${label}: ${JSON.stringify(actual.body)}`).not.toContain(actual.body.error);
    expect(actual.status, label).not.toBe(401);
    return;
  }
  expect(
    { status: actual.status, error: actual.body.error, requiredPermission: actual.body.requiredPermission },
    label,
  ).toEqual({ status: expected.status, error: expected.error, requiredPermission: expected.requiredPermission });
}

// --- The matrix -----------------------------------------------------------------------------------
const guarded = routes.filter((route) => !('public' in route.access));
const isV1 = (route: RouteDefinition) => route.path.startsWith('/v1/');

function impliedScopeFor(permission: string): string | undefined {
  return HOLDABLE_SCOPES.find((scope) => scope !== permission && withIncludedPermissions([scope]).has(permission));
}
function otherAreaScope(permission: string): string {
  return permission.startsWith('dictionaries.') ? 'analytics.view' : 'dictionaries.view';
}

describe.each(guarded.map((route) => [`${route.method.toUpperCase()} ${route.path}`, route] as const))(
  '%s',
  (name, route) => {
    const access = route.access;
    const permission = 'permission' in access ? access.permission : null;
    const refused = 'keysRefused' in access;
    const requires = 'permission' in access ? access.requires : undefined;
    const forbiddenFor = (scope: string) => ({ status: 403, error: 'forbidden', requiredPermission: scope });
    const notAllowed = { status: 403, error: 'api_key_not_allowed' };

    it('authenticates before anything else', async () => {
      expectOutcome(await call(route), { status: 401, error: 'unauthorized' }, `${name} no key`);
      expectOutcome(
        await call(route, { authorization: 'Basic dXNlcjpwYXNz' }),
        { status: 401, error: 'unauthorized' },
        `${name} malformed`,
      );
      expectOutcome(
        await call(route, { authorization: 'Bearer ' }),
        { status: 401, error: 'unauthorized' },
        `${name} empty token`,
      );
      expectOutcome(
        await call(route, { key: 'wsk_unknown' }),
        { status: 401, error: 'invalid_api_key' },
        `${name} unknown`,
      );
      expectOutcome(
        await call(route, { key: revokedKey.key }),
        { status: 401, error: 'invalid_api_key' },
        `${name} revoked`,
      );
      expectOutcome(
        await call(route, { key: expiredKey }),
        { status: 401, error: 'invalid_api_key' },
        `${name} expired`,
      );
    });

    it('refuses inactive owners and workspaces that are not approved', async () => {
      expectOutcome(
        await call(route, { key: suspendedOwnerKey }),
        { status: 403, error: 'api_key_owner_inactive' },
        `${name} owner suspended`,
      );
      expectOutcome(
        await call(route, { key: removedOwnerKey }),
        { status: 403, error: 'api_key_owner_inactive' },
        `${name} owner removed`,
      );
      expectOutcome(
        await call(route, { key: pendingWorkspaceKey }),
        { status: 403, error: 'workspace_pending_approval' },
        `${name} pending`,
      );
      expectOutcome(
        await call(route, { key: suspendedWorkspaceKey }),
        { status: 403, error: 'workspace_suspended' },
        `${name} suspended`,
      );
    });

    it('applies keys without scopes: every /v1 endpoint, no other', async () => {
      const expected: Outcome = refused
        ? notAllowed
        : isV1(route)
          ? 'passes'
          : { status: 403, error: 'api_key_not_scoped' };
      expectOutcome(await call(route, { key: unscopedKey }), expected, `${name} unscoped`);
    });

    it('honours the exact scope and the scopes that include it, and names the missing one', async () => {
      if (refused) {
        expectOutcome(await call(route, { key: fullKey }), notAllowed, `${name} every scope`);
        return;
      }
      if (permission === null) {
        // Any valid key: no scope is checked.
        for (const key of [fullKey, neverHoldableKey, await keyWith('analytics.view', viewer)])
          expectOutcome(await call(route, { key }), 'passes', `${name} any key`);
        return;
      }
      expectOutcome(await call(route, { key: await keyWith(permission) }), 'passes', `${name} exact scope`);
      const implied = impliedScopeFor(permission);
      if (implied)
        expectOutcome(await call(route, { key: await keyWith(implied) }), 'passes', `${name} implied by ${implied}`);
      expectOutcome(
        await call(route, { key: await keyWith(otherAreaScope(permission)) }),
        forbiddenFor(permission),
        `${name} other area`,
      );
      expectOutcome(
        await call(route, { key: neverHoldableKey }),
        forbiddenFor(permission),
        `${name} never-holdable scopes`,
      );
    });

    it("intersects the key's scopes with the member's current role", async () => {
      if (refused)
        return expectOutcome(await call(route, { key: await keyWith('campaigns.view', viewer) }), notAllowed, name);
      const scope = permission ?? 'campaigns.edit';
      const expected: Outcome = permission === null || scope.endsWith('.view') ? 'passes' : forbiddenFor(scope);
      expectOutcome(await call(route, { key: await keyWith(scope, viewer) }), expected, `${name} viewer role`);
    });

    it('refuses a workspace without the plan tier or feature the endpoint needs', async () => {
      const expected: Outcome = refused
        ? notAllowed
        : requires && 'plan' in requires
          ? { status: 403, error: 'plan_required' }
          : requires && 'feature' in requires
            ? { status: 403, error: 'feature_not_enabled' }
            : 'passes';
      expectOutcome(await call(route, { key: noPlan.key, campaignId: noPlan.campaignId }), expected, `${name} no plan`);
    });

    if (campaignPath(route.path) && !refused)
      it("gives another workspace's campaign and an unknown id the same 403", async () => {
        const other = await call(route, { key: fullKey, campaignId: otherCampaign.id });
        const unknown = await call(route, { key: fullKey, campaignId: randomUUID() });
        expect({ status: other.status, body: other.body }).toEqual({ status: 403, body: { error: 'forbidden' } });
        expect(other.headers.get('ratelimit')).toMatch(/^limit=1000000, /);
        expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 403, body: { error: 'forbidden' } });
      });
  },
);

describe('the member behind a key', () => {
  it('narrowing the role narrows the key from the next request', async () => {
    const { id: memberId } = await addMember(db, workspaceId, `narrowed-${randomUUID()}@matrix.test`, 'owner');
    const key = await keyFor(memberId, ['campaigns.edit']);
    const create = () => api.request('POST', '/campaigns', { key, body: { name: 'narrow' } });
    expect((await create()).status).toBe(201);
    await updateMember(db, memberId, { role: 'viewer' });
    const refused = await create();
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'forbidden', requiredPermission: 'campaigns.edit' });
    await updateMember(db, memberId, { role: 'manager' });
    expect((await create()).status).toBe(201);
  });

  it('refuses EMAIL campaigns to keys on create, start and resume', async () => {
    const created = await api.request('POST', '/campaigns', { key: fullKey, body: { name: 'mail', channel: 'EMAIL' } });
    expect(created.status).toBe(403);
    expect(await created.json()).toEqual({ error: 'api_key_not_allowed' });
    const email = await db.campaign.create({ data: { workspaceId, name: 'mail', channel: 'EMAIL' } });
    for (const transition of ['start', 'resume']) {
      const response = await api.request('POST', `/campaigns/${email.id}/${transition}`, { key: fullKey, body: {} });
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: 'api_key_not_allowed' });
    }
  });
});

describe('stricter scopes for keys (spec section 5)', () => {
  const STRICTER: Array<[string, string, string, string]> = [
    ['post', '/calls/{id}/transcript-translation', 'calls.view', 'calls.edit'],
    ['post', '/calls/{id}/issues', 'calls.view', 'calls.edit'],
    ['delete', '/campaigns/{id}/chat/messages', 'intel.view', 'campaigns.delete'],
    ['post', '/campaigns/{id}/import-from-crm', 'crm.edit', 'campaigns.edit'],
    ['post', '/campaigns/{id}/sheet', 'intel.view', 'campaigns.edit'],
    ['post', '/campaigns/{id}/sheet/sync', 'intel.view', 'campaigns.edit'],
    ['patch', '/campaigns/{id}/sheet', 'intel.view', 'campaigns.edit'],
    ['post', '/campaigns/{id}/sheet/rebuild', 'intel.view', 'campaigns.edit'],
    ['delete', '/campaigns/{id}/sheet', 'intel.view', 'campaigns.delete'],
    ['delete', '/knowledge-bases/{id}/documents/{docId}', 'chatbots.edit', 'chatbots.delete'],
    ['post', '/whatsapp/templates/{id}/sync-status', 'whatsapp.view', 'whatsapp.edit'],
    ['post', '/whatsapp/conversations/{id}/archive', 'whatsapp.view', 'whatsapp.edit'],
    ['post', '/whatsapp/conversations/{id}/unarchive', 'whatsapp.view', 'whatsapp.edit'],
    ['put', '/whatsapp/campaigns/{id}', 'whatsapp.edit', 'campaigns.edit'],
  ];

  it.each(STRICTER)(
    '%s %s: the dashboard permission %s is not enough, the key needs %s',
    async (method, path, dashboard, keyNeeds) => {
      const route = routes.find((candidate) => candidate.method === method && candidate.path === path);
      expect(route, `${method} ${path} is routed`).toBeDefined();
      expectOutcome(
        await call(route!, { key: await keyWith(dashboard) }),
        { status: 403, error: 'forbidden', requiredPermission: keyNeeds },
        `${path} with ${dashboard}`,
      );
      expectOutcome(await call(route!, { key: await keyWith(keyNeeds) }), 'passes', `${path} with ${keyNeeds}`);
    },
  );
});

describe('scopes a key can never have', () => {
  it('are not honoured even when a key row holds them', async () => {
    const issued = await createApiKey(db, owner, { scopes: [] });
    // Written around the issuing code on purpose: billing.recharge would include billing.view.
    await db.apiKey.update({ where: { id: issued.id }, data: { scopes: ['billing.recharge', 'team.manage'] } });
    const ledger = routes.find((route) => route.path === '/credits/ledger')!;
    expectOutcome(
      await call(ledger, { key: issued.key }),
      { status: 403, error: 'forbidden', requiredPermission: 'billing.view' },
      'recharge row',
    );
  });
});
