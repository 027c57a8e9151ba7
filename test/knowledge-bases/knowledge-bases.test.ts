import { describe, expect, it } from 'vitest';
import {
  MAX_DOCUMENT_CHARACTERS,
  MAX_DOCUMENTS_PER_KNOWLEDGE_BASE,
  MAX_KNOWLEDGE_BASES_PER_WORKSPACE,
} from '../../api/knowledge-bases/knowledge-bases';
import { insertAgent } from '../support/agents';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });

const owner = await createTestWorkspace(db, { scopes: ['chatbots.edit', 'chatbots.delete'] });
const editor = await createTestWorkspace(db, { scopes: ['chatbots.edit'] });
const viewer = await createTestWorkspace(db, { scopes: ['chatbots.view'] });
const stranger = await createTestWorkspace(db, { scopes: ['chatbots.edit', 'chatbots.delete'] });

type Json = Record<string, unknown> & { id: string };

async function call(method: string, path: string, key: string, body?: unknown) {
  const response = await api.request(method, path, { key, body });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as Json & Json[] };
}

async function newBase(workspace: TestWorkspace = owner, name = 'Product FAQ') {
  const created = await call('POST', '/knowledge-bases', workspace.key, { name, description: 'What callers ask' });
  expect(created.status).toBe(201);
  return created.body;
}

async function newDocument(baseId: string, workspace: TestWorkspace = owner, body: Record<string, unknown> = {}) {
  const created = await call('POST', `/knowledge-bases/${baseId}/documents`, workspace.key, {
    title: 'Returns',
    format: 'markdown',
    content: '# Returns\n\nWithin 30 days.',
    ...body,
  });
  expect(created.status).toBe(201);
  return created.body;
}

/** Everything stored for a workspace, to prove a refused request changed nothing. */
async function snapshot(workspaceId: string) {
  return {
    bases: await db.knowledgeBase.findMany({ where: { workspaceId }, orderBy: { id: 'asc' } }),
    documents: await db.knowledgeDocument.findMany({ where: { workspaceId }, orderBy: { id: 'asc' } }),
  };
}

/** An agent of the workspace using the given documents, made directly (the agents API is another part). */
async function agentUsing(workspaceId: string, documentIds: string[]) {
  const agent = await insertAgent(db, workspaceId, { name: 'Support agent' });
  await db.agentDocument.createMany({ data: documentIds.map((documentId) => ({ agentId: agent.id, documentId })) });
  return agent;
}

describe('knowledge bases', () => {
  it('are created, listed with their document count, read, renamed and deleted', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['chatbots.edit', 'chatbots.delete'] });
    const base = await newBase(workspace, '  Pricing  ');
    expect(base).toMatchObject({ name: 'Pricing', description: 'What callers ask', documentCount: 0 });
    await newDocument(base.id, workspace);
    await newDocument(base.id, workspace, { title: 'Shipping', format: 'text', content: 'Two days.' });
    const second = await newBase(workspace, 'Second');

    const list = await call('GET', '/knowledge-bases', workspace.key);
    expect(list.status).toBe(200);
    expect(list.body.map((item) => [item.name, item.documentCount])).toEqual([
      ['Second', 0],
      ['Pricing', 2],
    ]);

    const read = await call('GET', `/knowledge-bases/${base.id}`, workspace.key);
    expect(read.status).toBe(200);
    expect(read.body.documentCount).toBe(2);
    const documents = read.body.documents as Json[];
    expect(documents.map((document) => document.title)).toEqual(['Shipping', 'Returns']);
    expect(documents.every((document) => !('content' in document))).toBe(true);

    const renamed = await call('PATCH', `/knowledge-bases/${base.id}`, workspace.key, { description: 'Prices' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Pricing', description: 'Prices', documentCount: 2 });

    expect((await call('DELETE', `/knowledge-bases/${second.id}`, workspace.key)).status).toBe(204);
    expect((await call('GET', `/knowledge-bases/${second.id}`, workspace.key)).status).toBe(403);
    expect((await call('GET', '/knowledge-bases', workspace.key)).body.map((item) => item.id)).toEqual([base.id]);
  });

  it('refuse bad input with invalid_body and change nothing', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['chatbots.edit'] });
    const base = await newBase(workspace);
    const before = await snapshot(workspace.workspaceId);
    for (const body of [{}, { name: '   ' }, { name: 'x'.repeat(201) }, { name: 'A', extra: 1 }, { name: 7 }]) {
      const refused = await call('POST', '/knowledge-bases', workspace.key, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
    }
    for (const body of [{}, { name: '' }, { description: 'd'.repeat(2001) }]) {
      const refused = await call('PATCH', `/knowledge-bases/${base.id}`, workspace.key, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
    }
    expect(await snapshot(workspace.workspaceId)).toEqual(before);
  });

  it('answer 403 forbidden, leaking nothing, for an unknown, malformed or other workspace id', async () => {
    const theirs = await newBase(stranger);
    const before = await snapshot(stranger.workspaceId);
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const id of [theirs.id, unknown, 'not-a-uuid']) {
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { name: 'Mine now' }],
        ['DELETE', undefined],
      ] as const) {
        const refused = await call(method, `/knowledge-bases/${encodeURIComponent(id)}`, owner.key, body);
        expect(refused.status).toBe(403);
        expect(refused.body).toEqual({ error: 'forbidden' });
      }
    }
    expect((await call('GET', '/knowledge-bases', owner.key)).body.some((item) => item.id === theirs.id)).toBe(false);
    expect(await snapshot(stranger.workspaceId)).toEqual(before);
  });

  it('need chatbots.view to read, chatbots.edit to write and chatbots.delete to delete', async () => {
    const base = await newBase(editor);
    expect((await call('GET', '/knowledge-bases', viewer.key)).status).toBe(200);
    const refusedCreate = await call('POST', '/knowledge-bases', viewer.key, { name: 'No' });
    expect(refusedCreate.status).toBe(403);
    expect(refusedCreate.body).toEqual({ error: 'forbidden', requiredPermission: 'chatbots.edit' });
    const refusedDelete = await call('DELETE', `/knowledge-bases/${base.id}`, editor.key);
    expect(refusedDelete.body).toEqual({ error: 'forbidden', requiredPermission: 'chatbots.delete' });
    expect(await db.knowledgeBase.count({ where: { id: base.id } })).toBe(1);
  });

  it(`are limited to ${MAX_KNOWLEDGE_BASES_PER_WORKSPACE} per workspace (409 knowledge_base_limit_reached)`, async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['chatbots.edit'] });
    await db.knowledgeBase.createMany({
      data: Array.from({ length: MAX_KNOWLEDGE_BASES_PER_WORKSPACE - 1 }, (_, index) => ({
        workspaceId: workspace.workspaceId,
        name: `Base ${index}`,
      })),
    });
    // Two at once for the last place: the limit holds under concurrency.
    const answers = await Promise.all([
      call('POST', '/knowledge-bases', workspace.key, { name: 'Last A' }),
      call('POST', '/knowledge-bases', workspace.key, { name: 'Last B' }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    expect(answers.find((answer) => answer.status === 409)!.body.error).toBe('knowledge_base_limit_reached');
    expect(await db.knowledgeBase.count({ where: { workspaceId: workspace.workspaceId } })).toBe(
      MAX_KNOWLEDGE_BASES_PER_WORKSPACE,
    );
  });
});

describe('knowledge-base documents', () => {
  it('are added, listed without content and read with it; charCount counts code points', async () => {
    const base = await newBase();
    const content = 'Café 😀 — 漢字\r\nline two\n';
    const created = await newDocument(base.id, owner, { title: 'Menu', format: 'text', content });
    expect(created).toMatchObject({ knowledgeBaseId: base.id, title: 'Menu', format: 'text', content });
    // 22 code points, though JavaScript's length (UTF-16 units) says 23: the emoji is two units.
    expect(created.charCount).toBe(22);
    expect(content.length).toBe(23);

    const list = await call('GET', `/knowledge-bases/${base.id}/documents`, owner.key);
    expect(list.status).toBe(200);
    const { content: _content, ...summary } = created;
    expect(list.body).toEqual([summary]);

    const read = await call('GET', `/knowledge-bases/${base.id}/documents/${created.id}`, owner.key);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created);
    expect(read.body.content).toBe(content);
  });

  it(`hold at most ${MAX_DOCUMENT_CHARACTERS} characters; bad input is refused and changes nothing`, async () => {
    const base = await newBase();
    // The longest document allowed, of 4-byte characters: within the 1 MB body limit.
    const longest = await newDocument(base.id, owner, { content: '😀'.repeat(MAX_DOCUMENT_CHARACTERS) });
    expect(longest.charCount).toBe(MAX_DOCUMENT_CHARACTERS);
    const before = await snapshot(owner.workspaceId);
    const bodies = [
      { title: 'T', format: 'text', content: 'a'.repeat(MAX_DOCUMENT_CHARACTERS + 1) },
      { title: 'T', format: 'text', content: ' \n\t ' },
      { title: 'T', format: 'text', content: 'NUL \u0000 inside' },
      { title: 'T', format: 'pdf', content: 'JVBERi0xLjQK' },
      { title: 'T', format: 'html', content: '<p>x</p>' },
      { title: '', format: 'text', content: 'x' },
      { title: 'T', content: 'x' },
      { title: 'T', format: 'text', content: 'x', knowledgeBaseId: base.id },
    ];
    for (const body of bodies) {
      const refused = await call('POST', `/knowledge-bases/${base.id}/documents`, owner.key, body);
      expect(refused.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
    }
    // Over the 1 MB body limit: refused by the body parser (413), not stored.
    const tooBig = await call('POST', `/knowledge-bases/${base.id}/documents`, owner.key, {
      title: 'T',
      format: 'text',
      content: '😀'.repeat(300_000),
    });
    expect(tooBig.status).toBe(413);
    expect(await snapshot(owner.workspaceId)).toEqual(before);
  });

  it(`are limited to ${MAX_DOCUMENTS_PER_KNOWLEDGE_BASE} per knowledge base (409 document_limit_reached)`, async () => {
    const base = await newBase();
    await db.knowledgeDocument.createMany({
      data: Array.from({ length: MAX_DOCUMENTS_PER_KNOWLEDGE_BASE - 1 }, (_, index) => ({
        workspaceId: owner.workspaceId,
        knowledgeBaseId: base.id,
        title: `Doc ${index}`,
        format: 'text',
        content: 'x',
        charCount: 1,
      })),
    });
    const body = { title: 'Last', format: 'text', content: 'x' };
    const answers = await Promise.all([
      call('POST', `/knowledge-bases/${base.id}/documents`, owner.key, body),
      call('POST', `/knowledge-bases/${base.id}/documents`, owner.key, body),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    expect(answers.find((answer) => answer.status === 409)!.body.error).toBe('document_limit_reached');
    expect(await db.knowledgeDocument.count({ where: { knowledgeBaseId: base.id } })).toBe(
      MAX_DOCUMENTS_PER_KNOWLEDGE_BASE,
    );
    expect((await call('GET', `/knowledge-bases/${base.id}`, owner.key)).body.documentCount).toBe(
      MAX_DOCUMENTS_PER_KNOWLEDGE_BASE,
    );
  });

  it('of another knowledge base or another workspace answer 403 forbidden and change nothing', async () => {
    const base = await newBase();
    const otherBase = await newBase();
    const document = await newDocument(otherBase.id);
    const theirBase = await newBase(stranger);
    const theirDocument = await newDocument(theirBase.id, stranger);
    const before = [await snapshot(owner.workspaceId), await snapshot(stranger.workspaceId)];
    const paths = [
      `/knowledge-bases/${base.id}/documents/${document.id}`,
      `/knowledge-bases/${base.id}/documents/${theirDocument.id}`,
      `/knowledge-bases/${theirBase.id}/documents/${theirDocument.id}`,
      `/knowledge-bases/${base.id}/documents/not-a-uuid`,
      `/knowledge-bases/not-a-uuid/documents/${document.id}`,
    ];
    for (const path of paths)
      for (const method of ['GET', 'DELETE']) {
        const refused = await call(method, path, owner.key);
        expect(refused.status, `${method} ${path}`).toBe(403);
        expect(refused.body).toEqual({ error: 'forbidden' });
      }
    for (const [method, body] of [
      ['GET', undefined],
      ['POST', { title: 'Mine', format: 'text', content: 'x' }],
    ] as const) {
      const refused = await call(method, `/knowledge-bases/${theirBase.id}/documents`, owner.key, body);
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ error: 'forbidden' });
    }
    expect([await snapshot(owner.workspaceId), await snapshot(stranger.workspaceId)]).toEqual(before);
  });

  it('are deleted only by a key with chatbots.delete (stricter scope for keys); chatbots.edit is refused', async () => {
    const base = await newBase(editor);
    const document = await newDocument(base.id, editor);
    const refused = await call('DELETE', `/knowledge-bases/${base.id}/documents/${document.id}`, editor.key);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'forbidden', requiredPermission: 'chatbots.delete' });
    expect(await db.knowledgeDocument.count({ where: { id: document.id } })).toBe(1);
  });

  it("are not deleted by a manager's key: the role has chatbots.edit, the key needs chatbots.delete", async () => {
    // Effective permissions are the key's scopes intersected with the member's role (spec 5, rule 4).
    const manager = await createTestWorkspace(db, { role: 'manager', scopes: ['chatbots.edit', 'chatbots.delete'] });
    const base = await newBase(manager);
    const document = await newDocument(base.id, manager);
    const refused = await call('DELETE', `/knowledge-bases/${base.id}/documents/${document.id}`, manager.key);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'forbidden', requiredPermission: 'chatbots.delete' });
    expect(await db.knowledgeDocument.count({ where: { id: document.id } })).toBe(1);
  });

  it('deleted stop being used by every agent at once', async () => {
    const base = await newBase();
    const kept = await newDocument(base.id, owner, { title: 'Kept' });
    const removed = await newDocument(base.id, owner, { title: 'Removed' });
    const first = await agentUsing(owner.workspaceId, [kept.id, removed.id]);
    const second = await agentUsing(owner.workspaceId, [removed.id]);

    const deleted = await call('DELETE', `/knowledge-bases/${base.id}/documents/${removed.id}`, owner.key);
    expect(deleted.status).toBe(204);
    expect(await db.knowledgeDocument.count({ where: { id: removed.id } })).toBe(0);
    expect(await db.agentDocument.findMany({ where: { agentId: { in: [first.id, second.id] } } })).toEqual([
      expect.objectContaining({ agentId: first.id, documentId: kept.id }),
    ]);
    expect((await call('GET', `/knowledge-bases/${base.id}/documents/${removed.id}`, owner.key)).status).toBe(403);
    expect((await call('GET', `/knowledge-bases/${base.id}`, owner.key)).body.documentCount).toBe(1);
  });

  it('go with their knowledge base, and every agent stops using them', async () => {
    const base = await newBase();
    const documents = [await newDocument(base.id), await newDocument(base.id, owner, { title: 'Second' })];
    const agent = await agentUsing(
      owner.workspaceId,
      documents.map((document) => document.id),
    );
    expect(await db.agentDocument.count({ where: { agentId: agent.id } })).toBe(2);

    expect((await call('DELETE', `/knowledge-bases/${base.id}`, owner.key)).status).toBe(204);
    expect(await db.knowledgeDocument.count({ where: { knowledgeBaseId: base.id } })).toBe(0);
    expect(await db.agentDocument.count({ where: { agentId: agent.id } })).toBe(0);
    // The agent itself stays.
    expect(await db.agent.count({ where: { id: agent.id } })).toBe(1);
  });
});
