import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../lib/error-codes';
import { whatsAppMessageWorkflowId } from '../../lib/temporal/workflow-ids';
import { grantCredits } from '../../lib/door/workspace-admin';
import { useTestDatabase } from '../support/database';
import { providerRecord } from '../support/whatsapp';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { connectedSender, reviewedTemplate, startWhatsAppStack } from '../support/whatsapp-stack';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const { api, whatsapp } = await startWhatsAppStack(db, url, temporal);

const SCOPES = ['whatsapp.send', 'whatsapp.edit', 'whatsapp.delete', 'billing.view'];
let numbers = 0;
/** A sender number of its own per workspace (a number is connected to one workspace at a time). */
const senderNumber = () => `+1415555${String(2000 + numbers++).padStart(4, '0')}`;

interface Message {
  id: string;
  status: string;
  body: string;
  errorCode: number | null;
  category: string | null;
  providerMessageId: string | null;
}

async function setUp(credits = 1) {
  const workspace = await createTestWorkspace(db, { scopes: SCOPES });
  if (credits > 0) await grantCredits(db, workspace.workspaceId, credits);
  const sender = await connectedSender(db, workspace, senderNumber());
  const template = await reviewedTemplate(api, workspace, {
    name: 'order_shipped',
    body: 'Hi {{1}}, your order {{2}} has shipped.',
  });
  expect(template.status).toBe('APPROVED');
  return { workspace, sender, template };
}

async function send(workspace: TestWorkspace, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return api.request('POST', '/whatsapp/messages', { key: workspace.key, body, headers });
}

async function sent(workspace: TestWorkspace, body: Record<string, unknown>) {
  const response = await send(workspace, body);
  expect(response.status).toBe(202);
  return ((await response.json()) as { message: Message }).message;
}

const messageOf = (id: string) => db.whatsAppMessage.findUniqueOrThrow({ where: { id } });
const settledTo = (id: string, status: string) =>
  until(
    () => messageOf(id),
    (message) => message.status === status,
  );

async function ledgerOf(workspace: TestWorkspace, messageId: string) {
  const response = await api.request('GET', '/credits/ledger?limit=200', { key: workspace.key });
  const { items } = (await response.json()) as {
    items: Array<{ kind: string; status: string; amount: string; referenceId: string | null }>;
  };
  const order = ['hold', 'hold_release', 'whatsapp_message'];
  return items
    .filter((item) => item.referenceId === messageId)
    .map((item) => [item.kind, item.status, item.amount])
    .sort((a, b) => order.indexOf(a[0]!) - order.indexOf(b[0]!));
}

const balanceOf = async (workspace: TestWorkspace) =>
  ((await (await api.request('GET', '/credits/balance', { key: workspace.key })).json()) as { balance: string })
    .balance;

describe('template messages', () => {
  it('are sent at any time, held for, and charged by category once delivered', async () => {
    const { workspace, sender, template } = await setUp();
    const message = await sent(workspace, {
      senderId: sender.id,
      to: '+14155550101', // the simulated provider: sent, delivered, read
      template: { id: template.id, variables: ['Ana', 'A-17'] },
    });
    expect(message).toMatchObject({
      status: 'accepted',
      body: 'Hi Ana, your order A-17 has shipped.',
      category: 'utility',
    });
    expect(await ledgerOf(workspace, message.id)).toEqual([['hold', 'pending', '-0.0200']]);
    const read = await settledTo(message.id, 'read');
    expect(read.providerMessageId).toMatch(/^wamid\./);
    expect(read.sentAt).not.toBeNull();
    expect(read.deliveredAt).not.toBeNull();
    expect(await ledgerOf(workspace, message.id)).toEqual([
      ['hold', 'posted', '-0.0200'],
      ['hold_release', 'posted', '0.0200'],
      ['whatsapp_message', 'posted', '-0.0200'],
    ]);
    expect(await balanceOf(workspace)).toBe('0.9800');
    // What the provider was asked: the template by name and language, the variables in order.
    const asked = await providerRecord(db).message(read.providerMessageId!);
    expect(JSON.stringify(asked.payload)).toContain('A-17');
  });

  it('that fail are not charged: the hold is voided', async () => {
    const { workspace, sender, template } = await setUp();
    const message = await sent(workspace, {
      senderId: sender.id,
      to: '+14155550109', // the simulated provider: undeliverable
      template: { id: template.id, variables: ['Bo', 'B-2'] },
    });
    const failed = await settledTo(message.id, 'failed');
    expect(failed.errorCode).toBe(131026);
    // The webhook commits the status first and settles the hold just after: wait for the settlement.
    const ledger = await until(
      () => ledgerOf(workspace, message.id),
      (entries) => entries.length > 1 || entries[0]?.[1] !== 'pending',
    );
    expect(ledger).toEqual([
      ['hold', 'voided', '-0.0200'],
      ['hold_release', 'posted', '0.0200'],
    ]);
    expect(await balanceOf(workspace)).toBe('1.0000');
  });

  it('are refused when the template is not APPROVED, or given the wrong number of variables', async () => {
    const { workspace, sender, template } = await setUp();
    const rejected = await reviewedTemplate(api, workspace, { name: 'promo_reject', body: 'Sale today!' });
    expect(rejected.status).toBe('REJECTED');
    const refused = await send(workspace, { senderId: sender.id, to: '+14155550101', template: { id: rejected.id } });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      error: ErrorCode.whatsapp_template_not_approved,
      templateStatus: 'REJECTED',
    });
    const short = await send(workspace, {
      senderId: sender.id,
      to: '+14155550101',
      template: { id: template.id, variables: ['only one'] },
    });
    expect(short.status).toBe(400);
    expect(await short.json()).toMatchObject({
      issues: [expect.objectContaining({ path: ['template', 'variables'] })],
    });
    expect(await db.whatsAppMessage.count({ where: { workspaceId: workspace.workspaceId } })).toBe(0);
  });

  it('retried with an Idempotency-Key is one message and one hold', async () => {
    const { workspace, sender, template } = await setUp();
    const body = { senderId: sender.id, to: '+14155550102', template: { id: template.id, variables: ['C', 'C-3'] } };
    const first = await send(workspace, body, { 'idempotency-key': 'welcome-1' });
    expect(first.status).toBe(202);
    const again = await send(workspace, body, { 'idempotency-key': 'welcome-1' });
    expect(again.status).toBe(200);
    const { message } = (await first.json()) as { message: Message };
    expect(await again.json()).toMatchObject({ message: { id: message.id }, deduplicated: true });
    await settledTo(message.id, 'read');
    expect(await db.whatsAppMessage.count({ where: { workspaceId: workspace.workspaceId } })).toBe(1);
    expect(await providerRecord(db).count('message', `payload->>'callbackData' = $1`, message.id)).toBe(1);
    expect(await balanceOf(workspace)).toBe('0.9800');
  });

  it('are refused 402 when the balance does not cover the price, recording nothing', async () => {
    const { workspace, sender, template } = await setUp(0.01);
    const response = await send(workspace, {
      senderId: sender.id,
      to: '+14155550101',
      template: { id: template.id, variables: ['D', 'D-4'] },
    });
    expect(response.status).toBe(402);
    expect(await response.json()).toMatchObject({
      error: 'insufficient_credits',
      balance: '0.0100',
      required: '0.0200',
    });
    expect(await db.whatsAppMessage.count({ where: { workspaceId: workspace.workspaceId } })).toBe(0);
  });

  it('are refused from a disconnected sender, and to a key without whatsapp.send', async () => {
    const { workspace, sender, template } = await setUp();
    const viewer = await createTestWorkspace(db, { scopes: ['whatsapp.view'] });
    const body = { senderId: sender.id, to: '+14155550101', template: { id: template.id, variables: ['E', 'E-5'] } };
    const scoped = await send(viewer, body);
    expect(scoped.status).toBe(403);
    expect(await scoped.json()).toMatchObject({ error: 'forbidden', requiredPermission: 'whatsapp.send' });
    expect((await api.request('DELETE', `/whatsapp/senders/${sender.id}`, { key: workspace.key })).status).toBe(204);
    const disconnected = await send(workspace, body);
    expect(disconnected.status).toBe(409);
    expect(await disconnected.json()).toMatchObject({ error: ErrorCode.whatsapp_sender_disconnected });
  });
});

describe('free-form text and the 24-hour window', () => {
  it('is refused before the contact writes, sent after, and refused again once the window closed', async () => {
    const { workspace, sender } = await setUp();
    const contact = '+14155550103';
    const text = { senderId: sender.id, to: contact, text: 'Thanks for writing!' };
    const closed = await send(workspace, text);
    expect(closed.status).toBe(409);
    expect(await closed.json()).toMatchObject({
      error: ErrorCode.whatsapp_window_closed,
      providerCode: 131047,
      windowExpiredAt: null,
    });
    await whatsapp.reply(sender.phoneNumberId, contact.slice(1), 'Hi, is my order on its way?');
    const conversation = await until(
      () => db.whatsAppConversation.findFirst({ where: { senderId: sender.id, contactE164: contact } }),
      (row) => row?.lastInboundAt != null,
    );
    const message = await sent(workspace, text);
    expect(message).toMatchObject({ body: 'Thanks for writing!', category: null });
    await settledTo(message.id, 'read');
    // Free-form text inside the window is priced as utility.
    expect(await balanceOf(workspace)).toBe('0.9800');
    // A day and an hour later the window has closed: only a template may go.
    const lastInboundAt = new Date(Date.now() - 25 * 60 * 60_000);
    await db.whatsAppConversation.update({ where: { id: conversation!.id }, data: { lastInboundAt } });
    const expired = await send(workspace, text);
    expect(expired.status).toBe(409);
    expect(await expired.json()).toMatchObject({
      error: ErrorCode.whatsapp_window_closed,
      windowExpiredAt: new Date(lastInboundAt.getTime() + 24 * 60 * 60_000).toISOString(),
    });
    // A new reply reopens it.
    await whatsapp.reply(sender.phoneNumberId, contact.slice(1), 'Hello again');
    await until(
      () => db.whatsAppConversation.findUniqueOrThrow({ where: { id: conversation!.id } }),
      (row) => row.lastInboundAt!.getTime() > lastInboundAt.getTime() + 60_000,
    );
    const reopened = await send(workspace, text);
    expect(reopened.status).toBe(202);
  });

  it('a message the provider refuses is failed with its code and not charged', async () => {
    const { workspace, sender } = await setUp();
    const contact = '+14155550104';
    await whatsapp.reply(sender.phoneNumberId, contact.slice(1), 'Hi');
    const conversation = await until(
      () => db.whatsAppConversation.findFirst({ where: { senderId: sender.id, contactE164: contact } }),
      (row) => row?.lastInboundAt != null,
    );
    // The service still believes the window open; the provider knows better (its own record of the reply,
    // moved back a day): it refuses with 131047, and the message's workflow fails it.
    await providerRecord(db).ageMessages(
      25 * 60 * 60_000,
      `direction = 'inbound' AND "phoneNumberId" = $2`,
      sender.phoneNumberId,
    );
    expect(conversation).not.toBeNull();
    const message = await sent(workspace, { senderId: sender.id, to: contact, text: 'Still there?' });
    const result = await temporal.client.workflow.getHandle(whatsAppMessageWorkflowId(message.id)).result();
    expect(result).toEqual({ status: 'failed', errorCode: 131047 });
    expect(await messageOf(message.id)).toMatchObject({ status: 'failed', errorCode: 131047 });
    expect(await ledgerOf(workspace, message.id)).toEqual([
      ['hold', 'voided', '-0.0200'],
      ['hold_release', 'posted', '0.0200'],
    ]);
  });
});
