import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Prisma } from '../../generated/prisma/client';
import { connectWhatsAppSender } from '../../lib/whatsapp/senders';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const owner = await createTestWorkspace(db, { scopes: ['whatsapp.edit'] });
const other = await createTestWorkspace(db, { scopes: ['whatsapp.edit'] });
const viewOnly = await createTestWorkspace(db, { scopes: ['whatsapp.view'] });
const sendOnly = await createTestWorkspace(db, { scopes: ['whatsapp.send'] });

interface ConversationBody {
  id: string;
  senderId: string;
  contactE164: string;
  contactName: string | null;
  lastInboundAt: string | null;
  lastMessageAt: string;
  windowOpen: boolean;
  windowExpiresAt: string | null;
  archived: boolean;
  archivedAt: string | null;
  createdAt: string;
}
interface MessageBody {
  id: string;
  conversationId: string;
  senderId: string;
  direction: string;
  status: string;
  createdAt: string;
  [field: string]: unknown;
}
interface ErrorBody {
  error: string;
  requiredPermission?: string;
  issues?: Array<{ path: Array<string | number> }>;
}

async function call<T>(method: string, path: string, who: TestWorkspace = owner) {
  const response = await api.request(method, path, { key: who.key, body: method === 'POST' ? {} : undefined });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

const HOUR = 3600_000;
const ago = (ms: number) => new Date(Date.now() - ms);

/** Senders as the operator connects them; conversations and messages as the provider's webhooks would record them. */
const sender = async (workspace: TestWorkspace, e164: string) =>
  (await connectWhatsAppSender(db, { workspaceId: workspace.workspaceId, e164, provider: 'simulated' })).id;
let contacts = 0;
const conversation = (
  workspace: TestWorkspace,
  senderId: string,
  data: Partial<Prisma.WhatsAppConversationUncheckedCreateInput> = {},
) =>
  db.whatsAppConversation.create({
    data: {
      workspaceId: workspace.workspaceId,
      senderId,
      contactE164: `+1415555${String(1000 + contacts++)}`,
      ...data,
    },
  });
const messageRow = (
  conversation: { id: string; workspaceId: string; senderId: string },
  data: Partial<Prisma.WhatsAppMessageUncheckedCreateInput> = {},
): Prisma.WhatsAppMessageCreateManyInput => ({
  workspaceId: conversation.workspaceId,
  conversationId: conversation.id,
  senderId: conversation.senderId,
  direction: 'outbound',
  type: 'text',
  body: 'Hello',
  status: 'sent',
  ...data,
});

const mainSender = await sender(owner, '+14155550100');
const secondSender = await sender(owner, '+14155550101');
const otherSender = await sender(other, '+14155550200');

// The inbox of the owner's workspace: window open, window closed, never wrote, archived; and another workspace's.
const open = await conversation(owner, mainSender, {
  contactName: 'Ana',
  lastInboundAt: ago(HOUR),
  lastMessageAt: ago(HOUR / 2),
});
const closed = await conversation(owner, mainSender, { lastInboundAt: ago(25 * HOUR), lastMessageAt: ago(2 * HOUR) });
const neverWrote = await conversation(owner, secondSender, { lastMessageAt: ago(3 * HOUR) });
const archived = await conversation(owner, mainSender, {
  lastMessageAt: ago(HOUR / 4),
  archived: true,
  archivedAt: ago(HOUR / 8),
});
const theirs = await conversation(other, otherSender, { lastMessageAt: new Date() });

describe('WhatsApp conversations: the inbox, the 24-hour window, archive and unarchive', () => {
  it('lists the inbox (not archived) by latest activity with total, each with its window as it stands now', async () => {
    const before = Date.now();
    const list = await call<{ items: ConversationBody[]; total: number }>('GET', '/whatsapp/conversations');
    expect(list.status).toBe(200);
    expect(list.body.items.map((row) => row.id)).toEqual([open.id, closed.id, neverWrote.id]);
    expect(list.body.total).toBe(3);
    expect(list.body.items[0]).toEqual({
      id: open.id,
      senderId: mainSender,
      contactE164: open.contactE164,
      contactName: 'Ana',
      lastInboundAt: open.lastInboundAt!.toISOString(),
      lastMessageAt: open.lastMessageAt.toISOString(),
      windowOpen: true,
      windowExpiresAt: new Date(open.lastInboundAt!.getTime() + 24 * HOUR).toISOString(),
      archived: false,
      archivedAt: null,
      createdAt: open.createdAt.toISOString(),
    });
    expect(list.body.items[1]).toMatchObject({
      windowOpen: false,
      windowExpiresAt: new Date(closed.lastInboundAt!.getTime() + 24 * HOUR).toISOString(),
    });
    expect(Date.parse(list.body.items[1]!.windowExpiresAt!)).toBeLessThan(before);
    expect(list.body.items[2]).toMatchObject({ lastInboundAt: null, windowOpen: false, windowExpiresAt: null });
  });

  it('lists the archive with archived=true, one sender with senderId, and pages by offset', async () => {
    const archive = await call<{ items: ConversationBody[]; total: number }>(
      'GET',
      '/whatsapp/conversations?archived=true',
    );
    expect(archive.body).toMatchObject({ total: 1, items: [{ id: archived.id, archived: true }] });
    const bySender = await call<{ items: ConversationBody[]; total: number }>(
      'GET',
      `/whatsapp/conversations?senderId=${secondSender}`,
    );
    expect(bySender.body.items.map((row) => row.id)).toEqual([neverWrote.id]);
    expect(bySender.body.total).toBe(1);
    const theirSender = await call<{ items: ConversationBody[]; total: number }>(
      'GET',
      `/whatsapp/conversations?senderId=${otherSender}`,
    );
    expect(theirSender.body).toEqual({ items: [], total: 0 });

    const first = await call<{ items: ConversationBody[]; total: number }>('GET', '/whatsapp/conversations?limit=2');
    const second = await call<{ items: ConversationBody[]; total: number }>(
      'GET',
      '/whatsapp/conversations?limit=2&offset=2',
    );
    expect(first.body.items.map((row) => row.id)).toEqual([open.id, closed.id]);
    expect(second.body.items.map((row) => row.id)).toEqual([neverWrote.id]);
    expect([first.body.total, second.body.total]).toEqual([3, 3]);
  });

  it.each(['limit=0', 'limit=201', 'offset=-1', 'archived=yes', 'senderId=nope', 'limit=1e2'])(
    'refuses the query %s with 400 invalid_body',
    async (query) => {
      const refused = await call<ErrorBody>('GET', `/whatsapp/conversations?${query}`);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
    },
  );

  it('archives and unarchives (local state, idempotent), answering the conversation', async () => {
    const first = await call<ConversationBody>('POST', `/whatsapp/conversations/${open.id}/archive`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id: open.id, archived: true, windowOpen: true });
    expect(first.body.archivedAt).not.toBeNull();
    const again = await call<ConversationBody>('POST', `/whatsapp/conversations/${open.id}/archive`);
    expect(again).toEqual({ status: 200, body: first.body });
    expect(await db.whatsAppConversation.findUniqueOrThrow({ where: { id: open.id } })).toMatchObject({
      archived: true,
      archivedAt: new Date(first.body.archivedAt!),
    });
    const inbox = await call<{ items: ConversationBody[]; total: number }>('GET', '/whatsapp/conversations');
    expect(inbox.body.items.map((row) => row.id)).not.toContain(open.id);
    const archive = await call<{ items: ConversationBody[] }>('GET', '/whatsapp/conversations?archived=true');
    expect(archive.body.items.map((row) => row.id)).toEqual([archived.id, open.id]);

    const back = await call<ConversationBody>('POST', `/whatsapp/conversations/${open.id}/unarchive`);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ id: open.id, archived: false, archivedAt: null });
    expect(await call('POST', `/whatsapp/conversations/${open.id}/unarchive`)).toEqual({
      status: 200,
      body: back.body,
    });
    expect(await db.whatsAppConversation.findUniqueOrThrow({ where: { id: open.id } })).toMatchObject({
      archived: false,
      archivedAt: null,
    });
  });

  it('archive and unarchive need whatsapp.edit of a key: whatsapp.view (or whatsapp.send) reads but gets 403', async () => {
    expect((await call('GET', '/whatsapp/conversations', viewOnly)).status).toBe(200);
    expect((await call('GET', '/whatsapp/conversations', sendOnly)).status).toBe(200);
    const ownViewer = await createTestWorkspace(db, { scopes: ['whatsapp.view'] });
    const mine = await conversation(ownViewer, await sender(ownViewer, '+14155550102'));
    for (const who of [ownViewer, sendOnly])
      for (const action of ['archive', 'unarchive'])
        expect(await call<ErrorBody>('POST', `/whatsapp/conversations/${mine.id}/${action}`, who)).toEqual({
          status: 403,
          body: { error: 'forbidden', requiredPermission: 'whatsapp.edit' },
        });
    expect((await db.whatsAppConversation.findUniqueOrThrow({ where: { id: mine.id } })).archived).toBe(false);
  });

  it("answers another workspace's conversation, an unknown id and a non-uuid with the same 403 and changes nothing", async () => {
    for (const id of [theirs.id, randomUUID(), 'nope'])
      for (const action of ['archive', 'unarchive'])
        expect(await call<ErrorBody>('POST', `/whatsapp/conversations/${id}/${action}`)).toEqual({
          status: 403,
          body: { error: 'forbidden' },
        });
    expect(await db.whatsAppConversation.findUniqueOrThrow({ where: { id: theirs.id } })).toEqual(theirs);
  });
});

describe('GET /whatsapp/messages: the latest 200, newest first, with filters', () => {
  it('answers at most the latest 200 of 205, newest first by createdAt then id', async () => {
    const busy = await createTestWorkspace(db, { scopes: ['whatsapp.view'] });
    const thread = await conversation(busy, await sender(busy, '+14155550103'));
    const base = Date.now() - 10 * HOUR;
    // 205 messages a second apart, the last three at one instant (the id decides among them).
    const rows = Array.from({ length: 205 }, (_, index) =>
      messageRow(thread, {
        id: randomUUID(),
        body: `m${index}`,
        createdAt: new Date(base + Math.min(index, 202) * 1000),
      }),
    );
    await db.whatsAppMessage.createMany({ data: rows });
    const list = await call<{ items: MessageBody[] }>('GET', '/whatsapp/messages', busy);
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(200);
    const expected = [...rows]
      .sort((a, b) => {
        const byTime = (b.createdAt as Date).getTime() - (a.createdAt as Date).getTime();
        return byTime || (b.id! < a.id! ? -1 : 1);
      })
      .slice(0, 200)
      .map((row) => row.id);
    expect(list.body.items.map((item) => item.id)).toEqual(expected);
    const bodies = new Set(list.body.items.map((item) => item.body));
    for (const oldest of ['m0', 'm1', 'm2', 'm3', 'm4']) expect(bodies.has(oldest)).toBe(false);
  });

  it('answers each message exactly as documented', async () => {
    const thread = await conversation(owner, mainSender);
    const template = await db.whatsAppTemplate.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'shipped',
        language: 'en',
        category: 'utility',
        body: 'Shipped {{1}}',
        variableCount: 1,
        provider: 'simulated',
      },
    });
    const campaignId = randomUUID();
    const leadId = randomUUID();
    const row = await db.whatsAppMessage.create({
      data: messageRow(thread, {
        type: 'template',
        templateId: template.id,
        category: 'utility',
        body: 'Shipped A-1',
        status: 'failed',
        providerMessageId: 'wamid.abc',
        errorCode: 131026,
        errorTitle: 'Message undeliverable',
        campaignId,
        leadId,
        createdAt: new Date(Date.now() + HOUR),
        sentAt: new Date(Date.now() + HOUR + 1000),
        failedAt: new Date(Date.now() + HOUR + 2000),
      }),
    });
    const list = await call<{ items: MessageBody[] }>('GET', '/whatsapp/messages');
    expect(list.body.items[0]).toEqual({
      id: row.id,
      conversationId: thread.id,
      senderId: mainSender,
      direction: 'outbound',
      type: 'template',
      templateId: template.id,
      category: 'utility',
      body: 'Shipped A-1',
      status: 'failed',
      providerMessageId: 'wamid.abc',
      errorCode: 131026,
      errorTitle: 'Message undeliverable',
      campaignId,
      leadId,
      createdAt: row.createdAt.toISOString(),
      sentAt: row.sentAt!.toISOString(),
      deliveredAt: null,
      readAt: null,
      failedAt: row.failedAt!.toISOString(),
      // Its sender is carried by the simulated provider: nobody was messaged (docs/configuration.md#simulators).
      simulated: true,
    });
  });

  it('filters by sender, conversation, direction and status (together too), never showing another workspace', async () => {
    const a = await conversation(owner, mainSender);
    const b = await conversation(owner, secondSender);
    const theirs = await conversation(other, otherSender);
    const at = (minutes: number) => new Date(Date.now() - minutes * 60_000);
    const seeded = [
      messageRow(a, { id: randomUUID(), direction: 'inbound', status: 'received', createdAt: at(50) }),
      messageRow(a, { id: randomUUID(), status: 'delivered', createdAt: at(40) }),
      messageRow(a, { id: randomUUID(), status: 'read', createdAt: at(30) }),
      messageRow(b, { id: randomUUID(), direction: 'inbound', status: 'received', createdAt: at(20) }),
      messageRow(b, { id: randomUUID(), status: 'delivered', createdAt: at(10) }),
      messageRow(theirs, { id: randomUUID(), status: 'delivered', createdAt: at(5) }),
    ];
    await db.whatsAppMessage.createMany({ data: seeded });
    const ids = (...indexes: number[]) => indexes.map((index) => seeded[index]!.id);
    const listed = async (query: string, who: TestWorkspace = owner) => {
      const response = await call<{ items: MessageBody[] }>('GET', `/whatsapp/messages?${query}`, who);
      expect(response.status).toBe(200);
      // Only the rows this test seeded: other tests' messages are in the workspace too.
      return response.body.items.map((item) => item.id).filter((id) => seeded.some((row) => row.id === id));
    };
    expect(await listed('')).toEqual(ids(4, 3, 2, 1, 0));
    expect(await listed(`conversationId=${a.id}`)).toEqual(ids(2, 1, 0));
    expect(await listed(`senderId=${secondSender}`)).toEqual(ids(4, 3));
    expect(await listed('direction=inbound')).toEqual(ids(3, 0));
    expect(await listed('status=delivered')).toEqual(ids(4, 1));
    expect(await listed(`direction=outbound&conversationId=${a.id}&status=read`)).toEqual(ids(2));
    expect(await listed(`conversationId=${theirs.id}`)).toEqual([]);
    expect(await listed('', other)).toEqual(ids(5));

    const everyInbound = await call<{ items: MessageBody[] }>('GET', '/whatsapp/messages?direction=inbound');
    expect(everyInbound.body.items.every((item) => item.direction === 'inbound')).toBe(true);
    const everyFromSecond = await call<{ items: MessageBody[] }>('GET', `/whatsapp/messages?senderId=${secondSender}`);
    expect(everyFromSecond.body.items.every((item) => item.senderId === secondSender)).toBe(true);
  });

  it.each(['direction=sideways', 'status=queued', 'senderId=nope', `conversationId=${'x'.repeat(36)}`])(
    'refuses the filter %s with 400 invalid_body',
    async (query) => {
      const refused = await call<ErrorBody>('GET', `/whatsapp/messages?${query}`);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
    },
  );

  it('is read with whatsapp.view or whatsapp.send; a key of another area gets 403 naming whatsapp.view', async () => {
    expect((await call('GET', '/whatsapp/messages', viewOnly)).status).toBe(200);
    expect((await call('GET', '/whatsapp/messages', sendOnly)).status).toBe(200);
    const stranger = await createTestWorkspace(db, { scopes: ['calls.view'] });
    expect(await call('GET', '/whatsapp/messages', stranger)).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'whatsapp.view' },
    });
  });
});
