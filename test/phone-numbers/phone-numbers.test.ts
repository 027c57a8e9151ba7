import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { assignPhoneNumber, type PhoneCapability } from '../../lib/phone-numbers/phone-numbers';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { connectCallers, TWILIO_TWIN_ACCOUNT } from '../support/carrier-calls';
import { startTestTwilioTwin } from '../support/twilio-twin';
import { runAdminCli } from '../support/admin-cli';
import { insertAgent } from '../support/agents';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const keyring = keyringSchema.parse(newKeyringEntry('k1'));
const api = await startTestApi({ db, url, temporal, carrierKeyring: keyring });

const owner = await createTestWorkspace(db, {
  scopes: ['phone_numbers.edit', 'campaigns.edit', 'campaigns.view'],
});
const viewer = await createTestWorkspace(db, { scopes: ['phone_numbers.view'] });
const stranger = await createTestWorkspace(db, { scopes: ['phone_numbers.edit', 'campaigns.edit'] });

/**
 * The numbers whose routing can be ready: the Twilio twin's account holds them, and they are bound to the owner's
 * connection to it, so that setting an agent points them at the product there (docs/features/carriers/inbound.md).
 */
const CARRIER_NUMBERS = ['+16175550100', '+16175550101', '+16175550102'];
const twin = await startTestTwilioTwin(db, {
  accounts: [{ sid: TWILIO_TWIN_ACCOUNT_SID, authToken: TWILIO_TWIN_AUTH_TOKEN, incomingNumbers: CARRIER_NUMBERS }],
});
const connection = await connectCallers(db, keyring, {
  workspaceId: owner.workspaceId,
  provider: 'twilio-twin',
  baseUrl: twin.baseUrl,
  account: TWILIO_TWIN_ACCOUNT,
});
const carrierNumber = (e164: string, capabilities?: PhoneCapability[]) =>
  assignPhoneNumber(db, owner.workspaceId, e164, capabilities, connection.id);

const admin = (...args: string[]) => runAdminCli(url, ...args);
async function adminJson(...args: string[]) {
  const result = await admin(...args);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as { id: string };
}

type PhoneNumberBody = Record<string, unknown> & { id: string; e164: string };
async function listed(key: string) {
  const response = await api.request('GET', '/phone-numbers', { key });
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: PhoneNumberBody[] }).items;
}
async function route(id: string, inboundAgentId: string | null, key = owner.key) {
  const response = await api.request('PATCH', `/phone-numbers/${id}`, { key, body: { inboundAgentId } });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

const READY_SCRIPT = { openingLine: 'Hello, thanks for calling.', questions: ['How can I help?'], closing: 'Goodbye.' };
function createAgent(workspaceId: string, fields: { name?: string; voiceId?: string; script?: object } = {}) {
  return insertAgent(db, workspaceId, {
    name: fields.name ?? 'Reception',
    script: fields.script ?? READY_SCRIPT,
    ...(fields.voiceId !== undefined && { voiceId: fields.voiceId }),
  });
}

describe('npm run admin -- number assign', () => {
  it('assigns numbers with country and region read from the number, voice only by default', async () => {
    const us = await adminJson('number', 'assign', '--workspace', viewer.workspaceId, '--e164', '+1 415 555 0100');
    const uk = await adminJson(
      'number',
      'assign',
      '--workspace',
      viewer.workspaceId,
      '--e164',
      '+442079460000',
      '--capabilities',
      'voice,whatsapp',
    );
    const de = await adminJson(
      'number',
      'assign',
      '--workspace',
      viewer.workspaceId,
      '--e164',
      '+493012345678',
      '--capabilities',
      'whatsapp',
    );
    const rows = await db.phoneNumber.findMany({ where: { workspaceId: viewer.workspaceId } });
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(us.id)).toMatchObject({
      e164: '+14155550100',
      country: 'US',
      region: 'San Francisco, CA',
      capabilities: { voice: true, whatsapp: false },
      inboundAgentId: null,
    });
    expect(byId.get(uk.id)).toMatchObject({
      e164: '+442079460000',
      country: 'GB',
      region: 'London',
      capabilities: { voice: true, whatsapp: true },
    });
    expect(byId.get(de.id)).toMatchObject({
      country: 'DE',
      region: 'Berlin',
      capabilities: { voice: false, whatsapp: true },
    });
    // A number the geocoder cannot place (toll-free) has an empty region.
    await assignPhoneNumber(db, viewer.workspaceId, '+18005550100');
    expect(await db.phoneNumber.findUnique({ where: { e164: '+18005550100' } })).toMatchObject({
      country: 'US',
      region: '',
    });
  });

  it('refuses bad input and a number held by another workspace, and changes nothing', async () => {
    const held = await adminJson('number', 'assign', '--workspace', owner.workspaceId, '--e164', '+12125550100');
    const before = await db.phoneNumber.findMany({ orderBy: { e164: 'asc' } });

    const refusals: Array<[string[], number, RegExp]> = [
      [['--workspace', owner.workspaceId, '--e164', '+1555'], 64, /^--e164: must be a valid E\.164 number/],
      [['--workspace', owner.workspaceId, '--e164', '4155550100'], 64, /^--e164: must be a valid E\.164 number/],
      [['--workspace', owner.workspaceId, '--e164', '+80012345678'], 64, /^--e164: must be a number of a country/],
      [
        ['--workspace', owner.workspaceId, '--e164', '+14155550111', '--capabilities', 'voice,fax'],
        64,
        /^--capabilities: /,
      ],
      [
        ['--workspace', owner.workspaceId, '--e164', '+14155550111', '--capabilities', ''],
        64,
        /^--capabilities: give one or more of voice, whatsapp/,
      ],
      [['--workspace', owner.workspaceId], 64, /^--e164: /],
      [['--workspace', randomUUID(), '--e164', '+14155550111'], 1, /^workspace [0-9a-f-]+ not found/],
      [
        ['--workspace', stranger.workspaceId, '--e164', '+1 212 555 0100'],
        1,
        new RegExp(`^\\+12125550100 is assigned to workspace ${owner.workspaceId}; release it first`),
      ],
    ];
    for (const [flags, code, message] of refusals) {
      const result = await admin('number', 'assign', ...flags);
      expect(result.code, flags.join(' ')).toBe(code);
      expect(result.stderr, flags.join(' ')).toMatch(message);
      expect(result.stdout).toBe('');
    }
    expect(await db.phoneNumber.findMany({ orderBy: { e164: 'asc' } })).toEqual(before);

    // The same workspace again: the same number, its capabilities replaced when given.
    const again = await adminJson(
      'number',
      'assign',
      '--workspace',
      owner.workspaceId,
      '--e164',
      '+12125550100',
      '--capabilities',
      'voice,whatsapp',
    );
    expect(again.id).toBe(held.id);
    const row = await db.phoneNumber.findUniqueOrThrow({ where: { id: held.id } });
    expect(row.capabilities).toEqual({ voice: true, whatsapp: true });
    expect(row.assignedAt).toEqual(before.find((number) => number.id === held.id)!.assignedAt);
  });

  it('releases a number: it leaves its campaigns and can be assigned to another workspace', async () => {
    const { id } = await assignPhoneNumber(db, owner.workspaceId, '+13125550100');
    const campaign = await db.campaign.create({
      data: { workspaceId: owner.workspaceId, name: 'Chicago', callerNumbers: ['+13125550100', '+12125550100'] },
    });
    expect(await adminJson('number', 'release', '--e164', '+13125550100')).toEqual({ id });
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callerNumbers).toEqual([
      '+12125550100',
    ]);
    const again = await admin('number', 'release', '--e164', '+13125550100');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^\+13125550100 is not assigned to any workspace/);
    const reassigned = await adminJson(
      'number',
      'assign',
      '--workspace',
      stranger.workspaceId,
      '--e164',
      '+13125550100',
    );
    expect(reassigned.id).not.toBe(id);
  });
});

describe('GET /phone-numbers', () => {
  it("answers { items } with exactly the spec's fields, the workspace's numbers only", async () => {
    const items = await listed(viewer.key);
    expect(items.map((number) => number.e164)).toEqual([
      '+14155550100',
      '+18005550100',
      '+442079460000',
      '+493012345678',
    ]);
    for (const number of items)
      expect(Object.keys(number).sort()).toEqual(
        [
          'assignedAt',
          'capabilities',
          'country',
          'e164',
          'id',
          'inboundAgentId',
          'inboundAgentName',
          'inboundReady',
          'region',
        ].sort(),
      );
    const row = await db.phoneNumber.findUniqueOrThrow({ where: { e164: '+14155550100' } });
    expect(items[0]).toEqual({
      id: row.id,
      e164: '+14155550100',
      country: 'US',
      region: 'San Francisco, CA',
      capabilities: { voice: true, whatsapp: false },
      assignedAt: row.assignedAt.toISOString(),
      inboundAgentId: null,
      inboundAgentName: null,
      inboundReady: false,
    });
    expect((await listed(owner.key)).map((number) => number.e164)).not.toContain('+14155550100');
  });

  it('needs phone_numbers.view (edit includes it); a key without scopes is refused off /v1', async () => {
    const other = await createTestWorkspace(db, { scopes: ['campaigns.view'] });
    const refused = await api.request('GET', '/phone-numbers', { key: other.key });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'forbidden', requiredPermission: 'phone_numbers.view' });
    const unscoped = await createTestWorkspace(db);
    const notScoped = await api.request('GET', '/phone-numbers', { key: unscoped.key });
    expect(await notScoped.json()).toEqual({ error: 'api_key_not_scoped' });
    expect(await listed(owner.key)).toBeInstanceOf(Array);
  });
});

describe('PATCH /phone-numbers/{id}: inbound routing', () => {
  it('routes to an agent of the workspace; inboundAgentName follows the agent; null unroutes', async () => {
    const { id } = await carrierNumber('+16175550100');
    const agent = await createAgent(owner.workspaceId, { name: 'Front desk' });

    const routed = await route(id, agent.id);
    expect(routed.status).toBe(200);
    expect(routed.body).toMatchObject({
      id,
      e164: '+16175550100',
      inboundAgentId: agent.id,
      inboundAgentName: 'Front desk',
      inboundReady: true,
    });
    expect((await listed(owner.key)).find((number) => number.id === id)).toEqual(routed.body);

    await db.agent.update({ where: { id: agent.id }, data: { name: 'Night desk' } });
    expect((await listed(owner.key)).find((number) => number.id === id)).toMatchObject({
      inboundAgentName: 'Night desk',
      inboundReady: true,
    });

    // A UUID in capitals names the same agent; the id is answered as stored.
    expect((await route(id, agent.id.toUpperCase())).body.inboundAgentId).toBe(agent.id);

    const cleared = await route(id, null);
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ inboundAgentId: null, inboundAgentName: null, inboundReady: false });
    expect((await db.phoneNumber.findUniqueOrThrow({ where: { id } })).inboundAgentId).toBeNull();
  });

  it('is ready only with a voice number its carrier sends to the product and an agent with a catalogue voice and an opening line', async () => {
    const voiceNumber = (await carrierNumber('+16175550101')).id;
    const whatsappOnly = (await carrierNumber('+16175550102', ['whatsapp'])).id;
    const ready = await createAgent(owner.workspaceId);
    const unknownVoice = await createAgent(owner.workspaceId, { voiceId: 'espeak-ng/klingon' });
    const silent = await createAgent(owner.workspaceId, { script: { ...READY_SCRIPT, openingLine: '  ' } });
    const noScript = await createAgent(owner.workspaceId, { script: {} });

    expect((await route(voiceNumber, ready.id)).body.inboundReady).toBe(true);
    expect((await route(whatsappOnly, ready.id)).body.inboundReady).toBe(false);
    // Bound to no carrier (the simulated carrier takes no inbound calls): nothing sends its calls to the product.
    const unbound = (await assignPhoneNumber(db, owner.workspaceId, '+16175550109')).id;
    expect((await route(unbound, ready.id)).body).toMatchObject({ inboundAgentId: ready.id, inboundReady: false });
    for (const agent of [unknownVoice, silent, noScript]) {
      const answer = await route(voiceNumber, agent.id);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ inboundAgentId: agent.id, inboundReady: false });
    }

    // An agent deleted after routing: still named (so the broken routing shows), no longer ready.
    expect((await route(voiceNumber, ready.id)).body.inboundReady).toBe(true);
    await db.agent.update({ where: { id: ready.id }, data: { deletedAt: new Date() } });
    expect((await listed(owner.key)).find((number) => number.id === voiceNumber)).toMatchObject({
      inboundAgentId: ready.id,
      inboundAgentName: 'Reception',
      inboundReady: false,
    });
  });

  it("refuses an unknown, deleted or another workspace's agent with invalid_body and changes nothing", async () => {
    const { id } = await assignPhoneNumber(db, owner.workspaceId, '+16175550103');
    const current = await createAgent(owner.workspaceId, { name: 'Current' });
    await route(id, current.id);
    const deleted = await db.agent.update({
      where: { id: (await createAgent(owner.workspaceId)).id },
      data: { deletedAt: new Date() },
    });
    const foreign = await createAgent(stranger.workspaceId);

    for (const agentId of [randomUUID(), deleted.id, foreign.id, 'not-a-uuid']) {
      const refused = await route(id, agentId);
      expect(refused.status, agentId).toBe(400);
      expect(refused.body).toEqual({
        error: 'invalid_body',
        issues: [{ path: ['inboundAgentId'], message: 'no agent of this workspace has this id', code: 'custom' }],
      });
    }
    for (const body of [{}, { inboundAgentId: 7 }, { inboundAgentId: null, extra: true }]) {
      const response = await api.request('PATCH', `/phone-numbers/${id}`, { key: owner.key, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_body');
    }
    expect((await db.phoneNumber.findUniqueOrThrow({ where: { id } })).inboundAgentId).toBe(current.id);
  });

  it('never leaves a number routed to a deleted agent when routing and DELETE /agents race', async () => {
    const deleter = await createTestWorkspace(db, { scopes: ['agents.delete', 'phone_numbers.edit'] });
    const { id } = await assignPhoneNumber(db, deleter.workspaceId, '+16175550105');
    for (let round = 0; round < 6; round++) {
      const agent = await createAgent(deleter.workspaceId);
      const [routed, deleted] = await Promise.all([
        api.request('PATCH', `/phone-numbers/${id}`, { key: deleter.key, body: { inboundAgentId: agent.id } }),
        api.request('DELETE', `/agents/${agent.id}`, { key: deleter.key }),
      ]);
      // Either the routing came first and the delete was refused, or the delete came first and the routing was.
      expect([
        [200, 409],
        [400, 204],
      ]).toContainEqual([routed.status, deleted.status]);
      const number = await db.phoneNumber.findUniqueOrThrow({ where: { id } });
      const row = await db.agent.findUniqueOrThrow({ where: { id: agent.id } });
      expect(number.inboundAgentId === agent.id && row.deletedAt !== null).toBe(false);
      await db.phoneNumber.update({ where: { id }, data: { inboundAgentId: null } });
    }
  });

  it("answers another workspace's number as an unknown one (403 forbidden, nothing leaked or changed)", async () => {
    const { id } = await assignPhoneNumber(db, stranger.workspaceId, '+16175550104');
    const agent = await createAgent(owner.workspaceId);
    for (const target of [id, randomUUID(), 'not-a-uuid']) {
      const refused = await route(target, agent.id);
      expect(refused.status, target).toBe(403);
      expect(refused.body).toEqual({ error: 'forbidden' });
    }
    expect((await db.phoneNumber.findUniqueOrThrow({ where: { id } })).inboundAgentId).toBeNull();
    expect((await listed(owner.key)).map((number) => number.id)).not.toContain(id);

    const viewOnly = await route((await listed(viewer.key))[0]!.id, null, viewer.key);
    expect(viewOnly).toEqual({ status: 403, body: { error: 'forbidden', requiredPermission: 'phone_numbers.edit' } });
  });
});

describe('campaign callerNumbers', () => {
  it('accepts only numbers of the workspace with voice capability, on create and on update', async () => {
    await assignPhoneNumber(db, owner.workspaceId, '+17185550100');
    await assignPhoneNumber(db, owner.workspaceId, '+17185550101', ['whatsapp']);
    await assignPhoneNumber(db, stranger.workspaceId, '+17185550102');
    const post = (body: object) => api.request('POST', '/campaigns', { key: owner.key, body });

    const created = await post({ name: 'Brooklyn', callerNumbers: ['+1 718 555 0100'] });
    expect(created.status).toBe(201);
    const campaign = (await created.json()) as { id: string; callerNumbers: string[] };
    expect(campaign.callerNumbers).toEqual(['+17185550100']);

    const before = await db.campaign.count();
    const refusals: Array<[string[], Array<{ path: string[]; message: string }>]> = [
      [
        ['+17185550100', '+17185550102'],
        [
          {
            path: ['callerNumbers', '1'],
            message: '+17185550102 is not a phone number of this workspace (GET /phone-numbers)',
          },
        ],
      ],
      [
        ['+17185550199'],
        [
          {
            path: ['callerNumbers', '0'],
            message: '+17185550199 is not a phone number of this workspace (GET /phone-numbers)',
          },
        ],
      ],
      [
        ['+17185550101', '+17185550100'],
        [
          {
            path: ['callerNumbers', '0'],
            message: '+17185550101 has no voice capability: calls cannot be placed from it',
          },
        ],
      ],
    ];
    for (const [callerNumbers, issues] of refusals) {
      const refused = await post({ name: 'Refused', callerNumbers });
      expect(refused.status, callerNumbers.join()).toBe(400);
      expect(await refused.json()).toEqual({
        error: 'invalid_body',
        issues: issues.map((issue) => ({ ...issue, code: 'custom' })),
      });
      const patched = await api.request('PATCH', `/campaigns/${campaign.id}`, {
        key: owner.key,
        body: { name: 'Changed', callerNumbers },
      });
      expect(patched.status).toBe(400);
      expect(((await patched.json()) as { issues: unknown }).issues).toEqual(
        issues.map((issue) => ({ ...issue, code: 'custom' })),
      );
    }
    expect(await db.campaign.count()).toBe(before);
    expect(await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).toMatchObject({
      name: 'Brooklyn',
      callerNumbers: ['+17185550100'],
    });

    const patched = await api.request('PATCH', `/campaigns/${campaign.id}`, {
      key: owner.key,
      body: { callerNumbers: [] },
    });
    expect(((await patched.json()) as { callerNumbers: string[] }).callerNumbers).toEqual([]);
  });
});
