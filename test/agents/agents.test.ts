import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AGENT_LIMITS } from '../../lib/agents/agent-definition';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(await startTestCarrier(db), api) });
const owner = await createTestWorkspace(db, {
  scopes: [
    'agents.delete',
    'agents.edit',
    'knowledge.delete',
    'knowledge.edit',
    'campaigns.edit',
    'campaigns.delete',
    'dictionaries.delete',
    'phone_numbers.edit',
  ],
});
const stranger = await createTestWorkspace(db, {
  scopes: ['agents.delete', 'agents.edit', 'knowledge.delete', 'knowledge.edit', 'campaigns.edit'],
});

type Json = Record<string, unknown>;
async function call(method: string, path: string, body?: unknown, workspace: TestWorkspace = owner) {
  const response = await api.request(method, path, { key: workspace.key, body });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as Json };
}
const issuePaths = (body: Json) => (body.issues as Array<{ path: string[] }>).map((issue) => issue.path);

const AGENT = {
  name: 'Order confirmation',
  language: 'en-US',
  voiceId: 'espeak-ng/en-us',
  script: { openingLine: 'Hello, this is Acme.', questions: ['Is now a good time?'], closing: 'Goodbye.' },
};

async function createAgent(overrides: Json = {}, workspace: TestWorkspace = owner): Promise<Json & { id: string }> {
  const created = await call('POST', '/agents', { ...AGENT, ...overrides }, workspace);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as Json & { id: string };
}

const dictionary = (workspaceId: string, name = 'Terms') =>
  db.dictionary.create({ data: { workspaceId, name, terms: ['Acme'], charCount: 4 } });

async function documentsOf(workspaceId: string, count: number) {
  const base = await db.knowledgeBase.create({ data: { workspaceId, name: 'Help' } });
  const documents = [];
  for (let index = 0; index < count; index++)
    documents.push(
      await db.knowledgeDocument.create({
        data: {
          workspaceId,
          knowledgeBaseId: base.id,
          title: `Doc ${index}`,
          format: 'markdown',
          content: `# Doc ${index}`,
          charCount: 7,
        },
      }),
    );
  return documents;
}

const upload = (workspaceId: string) =>
  db.backgroundAudio.create({
    data: {
      workspaceId,
      slug: `upload-${randomUUID()}`,
      label: 'Upload',
      durationSecs: 1,
      mediaType: 'audio/wav',
      byteSize: 4,
      sha256: 'x',
      audio: Buffer.from('RIFF'),
    },
  });

describe('agents', () => {
  it('creates an agent with documented defaults and reads it back, listed with the others', async () => {
    const before = Date.now();
    const agent = await createAgent({ language: 'en-us' });
    expect(agent).toEqual({
      id: expect.any(String),
      name: AGENT.name,
      language: 'en-US',
      voiceId: AGENT.voiceId,
      script: AGENT.script,
      extractionFields: [],
      dictionaryIds: [],
      backgroundAudioId: null,
      backgroundAudioPlayback: null,
      voicemailMessage: null,
      instructions: null,
      firstMessage: null,
      transferNumber: null,
      transferMode: 'cold',
      conversationEngine: 'relay',
      documentIds: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(Date.parse(agent.createdAt as string)).toBeGreaterThanOrEqual(before - 1000);
    expect((await call('GET', `/agents/${agent.id}`)).body).toEqual(agent);
    const second = await createAgent({ name: 'Second', script: { openingLine: 'Hi' } });
    expect(second.script).toEqual({ openingLine: 'Hi', questions: [], closing: '' });
    const listed = await call('GET', '/agents');
    expect(listed.status).toBe(200);
    const ids = (listed.body as unknown as Json[]).map((item) => item.id);
    expect(ids).toEqual(expect.arrayContaining([agent.id, second.id]));
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(agent.id));
    expect(await db.agent.count({ where: { workspaceId: owner.workspaceId, id: agent.id } })).toBe(1);
  });

  it('stores every setting: extraction fields, dictionaries in order, platform and uploaded background audio', async () => {
    const [first, second] = [await dictionary(owner.workspaceId, 'A'), await dictionary(owner.workspaceId, 'B')];
    const own = await upload(owner.workspaceId);
    const extractionFields = [
      { name: 'interested', type: 'boolean', description: 'Wants to buy' },
      { name: 'plan', type: 'enum', description: 'Which plan', allowedValues: ['basic', 'pro'] },
      { name: 'callback_on', type: 'date', description: '' },
    ];
    const agent = await createAgent({
      extractionFields,
      dictionaryIds: [second!.id, first!.id],
      backgroundAudioId: 'platform-soft-rain',
    });
    expect(agent).toMatchObject({
      extractionFields,
      dictionaryIds: [second!.id, first!.id],
      backgroundAudioId: 'platform-soft-rain',
      // Played under neither carrier's calls (docs/features/background-audio.md#on-a-call), and it says so.
      backgroundAudioPlayback: { telnyx: 'not_supported', twilio: 'not_supported' },
    });
    const patched = await call('PATCH', `/agents/${agent.id}`, {
      dictionaryIds: [first!.id],
      backgroundAudioId: own.id.toUpperCase(),
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: AGENT.name,
      script: AGENT.script,
      extractionFields,
      dictionaryIds: [first!.id],
      backgroundAudioId: own.id,
    });
    expect(Date.parse(patched.body.updatedAt as string)).toBeGreaterThan(Date.parse(agent.updatedAt as string));
    expect(await db.agentDictionary.findMany({ where: { agentId: agent.id } })).toEqual([
      { agentId: agent.id, dictionaryId: first!.id, position: 0 },
    ]);
    const renamed = await call('PATCH', `/agents/${agent.id}`, { name: 'Renamed', backgroundAudioId: null });
    expect(renamed.body).toMatchObject({ name: 'Renamed', dictionaryIds: [first!.id], backgroundAudioId: null });
  });

  it("stores a conversation's settings: instructions, first message and a transfer number in E.164", async () => {
    const agent = await createAgent({
      instructions: '  You sell shoes. Be brief.  ',
      firstMessage: 'I am calling about your order.',
      transferNumber: '+1 415 555 0100',
    });
    expect(agent).toMatchObject({
      instructions: 'You sell shoes. Be brief.',
      firstMessage: 'I am calling about your order.',
      transferNumber: '+14155550100',
    });
    const changed = await call('PATCH', `/agents/${agent.id}`, { transferNumber: null, instructions: null });
    expect(changed.body).toMatchObject({
      instructions: null,
      firstMessage: 'I am calling about your order.',
      transferNumber: null,
    });
  });

  it('transfers cold unless the agent asks for a warm transfer (transferMode warm); another mode is 400', async () => {
    const agent = await createAgent({ transferNumber: '+14155550100' });
    expect(agent).toMatchObject({ transferMode: 'cold' });
    const warm = await call('PATCH', `/agents/${agent.id}`, { transferMode: 'warm' });
    expect(warm.body).toMatchObject({ transferMode: 'warm', transferNumber: '+14155550100' });
    const refused = await call('PATCH', `/agents/${agent.id}`, { transferMode: 'whisper' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_body' });
  });

  it('keeps an agent on the dialogue engine unless it asks for the script walk (conversationEngine gather)', async () => {
    const agent = await createAgent({ conversationEngine: 'gather' });
    expect(agent).toMatchObject({ conversationEngine: 'gather' });
    const back = await call('PATCH', `/agents/${agent.id}`, { conversationEngine: 'relay' });
    expect(back.body).toMatchObject({ conversationEngine: 'relay' });
    expect((await db.agent.findUniqueOrThrow({ where: { id: agent.id } })).conversationEngine).toBe('relay');
  });

  it('refuses invalid settings with invalid_body naming the field, and creates or changes nothing', async () => {
    const foreignDictionary = await dictionary(stranger.workspaceId);
    const foreignUpload = await upload(stranger.workspaceId);
    const own = await dictionary(owner.workspaceId);
    const field = (extra: Json) => ({ name: 'f', type: 'string', description: 'x', ...extra });
    const cases: Array<[Json, string[]]> = [
      [{ voiceId: 'espeak-ng/klingon' }, ['voiceId']],
      [{ language: 'not a tag!' }, ['language']],
      [{ name: '  ' }, ['name']],
      [{ name: 'x'.repeat(201) }, ['name']],
      [{ script: { openingLine: '' } }, ['script', 'openingLine']],
      [{ script: { openingLine: 'Hi', questions: Array(51).fill('Why?') } }, ['script', 'questions']],
      [{ script: { openingLine: 'Hi', closing: 'x'.repeat(1001) } }, ['script', 'closing']],
      // 21 placeholders: one over the cap (docs/hostile-input.md).
      [{ script: { openingLine: 'Hi', questions: ['{{a}} '.repeat(21)] } }, ['script', 'questions', '0']],
      [{ extractionFields: [field({ name: '1st' })] }, ['extractionFields', '0', 'name']],
      [{ extractionFields: [field({ type: 'enum' })] }, ['extractionFields', '0', 'allowedValues']],
      [{ extractionFields: [field({ type: 'enum', allowedValues: [] })] }, ['extractionFields', '0', 'allowedValues']],
      [{ extractionFields: [field({ allowedValues: ['a'] })] }, ['extractionFields', '0', 'allowedValues']],
      [{ extractionFields: [field({}), field({ name: 'F' })] }, ['extractionFields', '1', 'name']],
      [{ extractionFields: [field({ type: 'money' })] }, ['extractionFields', '0', 'type']],
      [{ dictionaryIds: [own.id, own.id] }, ['dictionaryIds', '1']],
      [{ dictionaryIds: [own.id, foreignDictionary.id] }, ['dictionaryIds', '1']],
      [{ dictionaryIds: [randomUUID()] }, ['dictionaryIds', '0']],
      [{ dictionaryIds: ['not-a-uuid'] }, ['dictionaryIds', '0']],
      [{ backgroundAudioId: 'platform-thunder' }, ['backgroundAudioId']],
      [{ backgroundAudioId: foreignUpload.id }, ['backgroundAudioId']],
      [{ documentIds: [] }, []],
      [{ transferNumber: '555-0100' }, ['transferNumber']],
      [{ instructions: 'x'.repeat(20_001) }, ['instructions']],
      [{ firstMessage: '   ' }, ['firstMessage']],
      [{ conversationEngine: 'model' }, ['conversationEngine']],
    ];
    const before = await db.agent.count();
    for (const [overrides, path] of cases) {
      const refused = await call('POST', '/agents', { ...AGENT, ...overrides });
      expect(refused.status, JSON.stringify(overrides)).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
      expect(issuePaths(refused.body), JSON.stringify(overrides)).toContainEqual(path);
    }
    expect(await db.agent.count()).toBe(before);
    expect(await db.agentDictionary.count({ where: { dictionaryId: own.id } })).toBe(0);

    const agent = await createAgent({ dictionaryIds: [own.id] });
    const refused = await call('PATCH', `/agents/${agent.id}`, {
      name: 'Changed',
      dictionaryIds: [foreignDictionary.id],
    });
    expect(refused.status).toBe(400);
    expect(issuePaths(refused.body)).toEqual([['dictionaryIds', '0']]);
    expect((await call('PATCH', `/agents/${agent.id}`, {})).status).toBe(400);
    expect((await call('GET', `/agents/${agent.id}`)).body).toEqual(agent);
    // A voice speaks its own language (docs/features/agents.md#voice-and-language): a mismatch is refused, never
    // reassigned; the same language in another region is not a mismatch.
    const french = await call('POST', '/agents', { ...AGENT, language: 'fr-FR' });
    expect([french.status, french.body.error, issuePaths(french.body)]).toEqual([400, 'invalid_body', [['voiceId']]]);
    expect(JSON.stringify(french.body)).toContain(
      "the voice espeak-ng/en-us speaks en-US, not the agent's language fr-FR: choose a voice of GET /voices in fr",
    );
    expect((await call('POST', '/agents', { ...AGENT, language: 'en-AU', voiceId: 'espeak-ng/en-gb' })).status).toBe(
      201,
    );
    const toFrench = await call('PATCH', `/agents/${agent.id}`, { language: 'fr-FR' });
    expect([toFrench.status, issuePaths(toFrench.body)]).toEqual([400, [['language']]]);
    const toGerman = await call('PATCH', `/agents/${agent.id}`, { voiceId: 'espeak-ng/de' });
    expect([toGerman.status, issuePaths(toGerman.body)]).toEqual([400, [['voiceId']]]);
    const both = await call('PATCH', `/agents/${agent.id}`, { language: 'fr-FR', voiceId: 'espeak-ng/fr Amélie' });
    expect([both.status, both.body.language, both.body.voiceId]).toEqual([200, 'fr-FR', 'espeak-ng/fr Amélie']);
    expect((await call('PATCH', `/agents/${agent.id}`, { language: 'en-US', voiceId: 'espeak-ng/en-us' })).status).toBe(
      200,
    );
  });

  it("answers another workspace's agent, an unknown id and a deleted agent with the same bare 403", async () => {
    const secret = await createAgent({ name: 'Secret agent name' });
    const deleted = await createAgent();
    expect((await call('DELETE', `/agents/${deleted.id}`)).status).toBe(204);
    for (const id of [secret.id, deleted.id, randomUUID(), 'not-a-uuid']) {
      const workspace = id === secret.id ? stranger : owner;
      for (const [method, path, body] of [
        ['GET', `/agents/${id}`],
        ['PATCH', `/agents/${id}`, { name: 'Mine now' }],
        ['DELETE', `/agents/${id}`],
        ['GET', `/agents/${id}/documents`],
        ['PUT', `/agents/${id}/documents`, { documentIds: [] }],
        ['DELETE', `/agents/${id}/documents/${randomUUID()}`],
      ] as Array<[string, string, unknown?]>) {
        const refused = await call(method, path, body, workspace);
        expect(refused, `${method} ${path}`).toEqual({ status: 403, body: { error: 'forbidden' } });
      }
    }
    const listed = (await call('GET', '/agents', undefined, stranger)).body as unknown as Json[];
    expect(JSON.stringify(listed)).not.toContain('Secret agent name');
    expect((await call('GET', '/agents')).body).not.toContainEqual(expect.objectContaining({ id: deleted.id }));
    expect((await call('GET', `/agents/${secret.id}`)).body.name).toBe('Secret agent name');
    expect((await db.agent.findUniqueOrThrow({ where: { id: deleted.id } })).deletedAt).not.toBeNull();
  });

  it('needs the agents scopes, and the knowledge scopes for documents', async () => {
    const agent = await createAgent();
    const viewer = await createTestWorkspace(db, { scopes: ['agents.view'] });
    const documentEditor = await createTestWorkspace(db, { scopes: ['knowledge.edit'] });
    expect((await call('GET', '/agents', undefined, viewer)).status).toBe(200);
    expect(await call('POST', '/agents', AGENT, viewer)).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'agents.edit' },
    });
    expect(await call('DELETE', `/agents/${agent.id}`, undefined, viewer)).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'agents.delete' },
    });
    expect(await call('PUT', `/agents/${agent.id}/documents`, { documentIds: [] }, viewer)).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'knowledge.edit' },
    });
    expect(await call('GET', '/agents', undefined, documentEditor)).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'agents.view' },
    });
  });
});

describe('deleting an agent something uses', () => {
  const campaignNaming = async (agentId: string) => {
    const created = await call('POST', '/campaigns', { name: 'Uses an agent', agentId });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id as string;
  };
  const transition = (campaignId: string, action: string) => call('POST', `/campaigns/${campaignId}/${action}`, {});

  it('is refused with 409 agent_in_use while a RUNNING or PAUSED campaign uses it, and allowed once it is stopped', async () => {
    const agent = await createAgent();
    const draft = await campaignNaming(agent.id);
    const campaign = await campaignNaming(agent.id);
    expect((await transition(campaign, 'start')).body.status).toBe('RUNNING');
    const inUse = { status: 409, body: { error: 'agent_in_use', campaignIds: [campaign], phoneNumberIds: [] } };
    expect(await call('DELETE', `/agents/${agent.id}`)).toEqual(inUse);
    expect((await transition(campaign, 'pause')).body.status).toBe('PAUSED');
    expect(await call('DELETE', `/agents/${agent.id}`)).toEqual(inUse);
    expect((await db.agent.findUniqueOrThrow({ where: { id: agent.id } })).deletedAt).toBeNull();
    expect((await transition(campaign, 'stop')).body.status).toBe('STOPPED');
    expect((await call('DELETE', `/agents/${agent.id}`)).status).toBe(204);
    // The DRAFT campaign never held it; it still reads the id it stored, and cannot start with a deleted agent.
    expect((await call('GET', `/campaigns/${draft}`)).body.agentId).toBe(agent.id);
    expect(await transition(draft, 'start')).toEqual({
      status: 409,
      body: {
        error: 'agent_deleted',
        agentId: agent.id,
        detail: 'set another agentId (or null) with PATCH /campaigns/{id}, then try again',
      },
    });
    expect((await db.campaign.findUniqueOrThrow({ where: { id: draft } })).status).toBe('DRAFT');
    const replacement = await createAgent();
    expect((await call('PATCH', `/campaigns/${draft}`, { agentId: replacement.id })).status).toBe(200);
    expect((await transition(draft, 'start')).body.status).toBe('RUNNING');
  });

  it('is refused while a phone number routes inbound calls to it, and allowed once it routes elsewhere', async () => {
    const agent = await createAgent();
    const number = await db.phoneNumber.create({
      data: {
        workspaceId: owner.workspaceId,
        e164: `+1415555${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`,
        country: 'US',
        region: '',
        capabilities: { voice: true, whatsapp: false },
      },
    });
    const routed = await call('PATCH', `/phone-numbers/${number.id}`, { inboundAgentId: agent.id });
    expect(routed.status, JSON.stringify(routed.body)).toBe(200);
    expect(await call('DELETE', `/agents/${agent.id}`)).toEqual({
      status: 409,
      body: { error: 'agent_in_use', campaignIds: [], phoneNumberIds: [number.id] },
    });
    expect((await call('PATCH', `/phone-numbers/${number.id}`, { inboundAgentId: null })).status).toBe(200);
    expect((await call('DELETE', `/agents/${agent.id}`)).status).toBe(204);
  });

  it('never leaves a RUNNING campaign on a deleted agent when a start and the delete race', async () => {
    for (let round = 0; round < 6; round++) {
      const agent = await createAgent();
      const campaign = await campaignNaming(agent.id);
      const [started, deleted] = await Promise.all([
        transition(campaign, 'start'),
        call('DELETE', `/agents/${agent.id}`),
      ]);
      const status = (await db.campaign.findUniqueOrThrow({ where: { id: campaign } })).status;
      const agentRow = await db.agent.findUniqueOrThrow({ where: { id: agent.id } });
      if (deleted.status === 204) {
        expect(started.body.error).toBe('agent_deleted');
        expect(status).toBe('DRAFT');
        expect(agentRow.deletedAt).not.toBeNull();
      } else {
        expect(deleted.body).toMatchObject({ error: 'agent_in_use', campaignIds: [campaign] });
        expect(started.body.status).toBe('RUNNING');
        expect(status).toBe('RUNNING');
        expect(agentRow.deletedAt).toBeNull();
      }
    }
  });
});

describe('the agent of a campaign', () => {
  it('must be a live agent of the workspace; otherwise 400 on agentId and the campaign is unchanged', async () => {
    const agent = await createAgent();
    const foreign = await createAgent({}, stranger);
    const gone = await createAgent();
    expect((await call('DELETE', `/agents/${gone.id}`)).status).toBe(204);
    const created = await call('POST', '/campaigns', { name: 'Named', agentId: agent.id.toUpperCase() });
    expect(created.status).toBe(201);
    expect(created.body.agentId).toBe(agent.id);
    const campaignId = created.body.id as string;
    const before = await db.campaign.count();
    for (const agentId of [foreign.id, gone.id, randomUUID(), 'agent-7']) {
      const refusedCreate = await call('POST', '/campaigns', { name: 'Refused', agentId });
      expect(refusedCreate.status, agentId).toBe(400);
      expect(issuePaths(refusedCreate.body)).toEqual([['agentId']]);
      const refusedUpdate = await call('PATCH', `/campaigns/${campaignId}`, { name: 'Changed', agentId });
      expect(refusedUpdate.status, agentId).toBe(400);
      expect(issuePaths(refusedUpdate.body)).toEqual([['agentId']]);
    }
    expect(await db.campaign.count()).toBe(before);
    expect(await db.campaign.findUniqueOrThrow({ where: { id: campaignId } })).toMatchObject({
      name: 'Named',
      agentId: agent.id,
    });
    const cleared = await call('PATCH', `/campaigns/${campaignId}`, { agentId: null });
    expect(cleared.body.agentId).toBeNull();
  });

  it('reads a value stored before agents existed as it was', async () => {
    const legacy = await db.campaign.create({
      data: { workspaceId: owner.workspaceId, name: 'Legacy', agentId: 'agent-7' },
    });
    expect((await call('GET', `/campaigns/${legacy.id}`)).body.agentId).toBe('agent-7');
  });
});

describe('agent documents', () => {
  it('links documents of the workspace, replaces the set keeping linkedAt, and unlinks one', async () => {
    const agent = await createAgent();
    const [first, second, third] = await documentsOf(owner.workspaceId, 3);
    const [foreign] = await documentsOf(stranger.workspaceId, 1);
    const linked = await call('PUT', `/agents/${agent.id}/documents`, { documentIds: [first!.id, second!.id] });
    expect(linked.status).toBe(200);
    const listed = linked.body as unknown as Array<Json & { linkedAt: string }>;
    const withoutLinkedAt = listed.map(({ linkedAt: _linkedAt, ...document }) => document);
    expect(withoutLinkedAt.sort((a, b) => String(a.id).localeCompare(String(b.id)))).toEqual(
      [first!, second!]
        .map(({ id, knowledgeBaseId, title, format, charCount }) => ({ id, knowledgeBaseId, title, format, charCount }))
        .sort((a, b) => a.id.localeCompare(b.id)),
    );
    expect((await call('GET', `/agents/${agent.id}/documents`)).body).toEqual(linked.body);
    const firstLinkedAt = listed.find((document) => document.id === first!.id)!.linkedAt;

    const refused = await call('PUT', `/agents/${agent.id}/documents`, {
      documentIds: [third!.id, foreign!.id, randomUUID()],
    });
    expect(refused.status).toBe(400);
    expect(issuePaths(refused.body)).toEqual([
      ['documentIds', '1'],
      ['documentIds', '2'],
    ]);
    expect((await call('GET', `/agents/${agent.id}/documents`)).body).toEqual(linked.body);

    const replaced = await call('PUT', `/agents/${agent.id}/documents`, { documentIds: [third!.id, first!.id] });
    const after = replaced.body as unknown as Array<Json & { linkedAt: string }>;
    expect(after.map((document) => document.id).sort()).toEqual([first!.id, third!.id].sort());
    expect(after.find((document) => document.id === first!.id)!.linkedAt).toBe(firstLinkedAt);
    expect(after[0]!.id).toBe(first!.id);
    expect(((await call('GET', `/agents/${agent.id}`)).body.documentIds as string[]).sort()).toEqual(
      [first!.id, third!.id].sort(),
    );

    expect((await call('DELETE', `/agents/${agent.id}/documents/${first!.id}`)).status).toBe(204);
    expect((await call('DELETE', `/agents/${agent.id}/documents/${second!.id}`)).status).toBe(204);
    expect(await call('DELETE', `/agents/${agent.id}/documents/${foreign!.id}`)).toEqual({
      status: 403,
      body: { error: 'forbidden' },
    });
    expect((await call('GET', `/agents/${agent.id}`)).body.documentIds).toEqual([third!.id]);
    expect(await db.knowledgeDocument.count({ where: { id: first!.id } })).toBe(1);
  });

  it('a document deleted from its knowledge base is unlinked from every agent', async () => {
    const [document] = await documentsOf(owner.workspaceId, 1);
    const agents = [await createAgent(), await createAgent()];
    for (const agent of agents)
      expect((await call('PUT', `/agents/${agent.id}/documents`, { documentIds: [document!.id] })).status).toBe(200);
    await db.knowledgeDocument.delete({ where: { id: document!.id } });
    for (const agent of agents) expect((await call('GET', `/agents/${agent.id}`)).body.documentIds).toEqual([]);
  });
});

describe('dictionaries of an agent', () => {
  it('deleting a dictionary removes it from every agent, keeping the order of the others', async () => {
    const [a, b, c] = [
      await dictionary(owner.workspaceId, 'A'),
      await dictionary(owner.workspaceId, 'B'),
      await dictionary(owner.workspaceId, 'C'),
    ];
    const agent = await createAgent({ dictionaryIds: [c.id, b.id, a.id] });
    const other = await createAgent({ dictionaryIds: [b.id] });
    expect((await call('DELETE', `/dictionaries/${b.id}`)).status).toBe(204);
    expect((await call('GET', `/agents/${agent.id}`)).body.dictionaryIds).toEqual([c.id, a.id]);
    expect((await call('GET', `/agents/${other.id}`)).body.dictionaryIds).toEqual([]);
  });
});

describe('agents: a workspace holds at most its limit of live agents', () => {
  const limit = AGENT_LIMITS.agentsPerWorkspace;
  const fill = (workspaceId: string, n: number, deletedAt: Date | null = null) =>
    db.agent.createMany({
      data: Array.from({ length: n }, (_, i) => ({
        workspaceId,
        name: `Filler ${i}`,
        language: 'en-US',
        voiceId: AGENT.voiceId,
        script: AGENT.script,
        deletedAt,
      })),
    });

  it('refuses one more with 409 agent_limit_reached; deleted agents hold no place', async () => {
    const full = await createTestWorkspace(db, { scopes: ['agents.delete', 'agents.edit'] });
    await fill(full.workspaceId, 5, new Date());
    await fill(full.workspaceId, limit - 1);
    const last = await createAgent({ name: 'Last' }, full);
    const over = await call('POST', '/agents', { ...AGENT, name: 'Over' }, full);
    expect(over.status).toBe(409);
    expect(over.body.error).toBe('agent_limit_reached');
    expect(await db.agent.count({ where: { workspaceId: full.workspaceId, deletedAt: null } })).toBe(limit);
    expect((await call('DELETE', `/agents/${last.id}`, undefined, full)).status).toBe(204);
    await createAgent({ name: 'Room again' }, full);
  });

  it('lets concurrent creates pass the limit no further', async () => {
    const racing = await createTestWorkspace(db, { scopes: ['agents.edit'] });
    await fill(racing.workspaceId, limit - 2);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => call('POST', '/agents', { ...AGENT, name: `Race ${i}` }, racing)),
    );
    expect(results.map((result) => result.status).sort()).toEqual([201, 201, 409, 409, 409]);
    expect(await db.agent.count({ where: { workspaceId: racing.workspaceId } })).toBe(limit);
  });
});
