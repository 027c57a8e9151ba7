import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { holdWhatsAppMessage } from '../../lib/credits/whatsapp-billing';
import { prismaSql } from '../../lib/run-sql';
import { grantCredits } from '../../lib/door/workspace-admin';
import { signWhatsAppWebhook } from '../../lib/whatsapp/webhook';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { startTestWhatsApp, TEST_WHATSAPP_APP_SECRET } from '../support/whatsapp';
import { createTestWorkspace } from '../support/workspace';

const APP_SECRET = 'test-whatsapp-app-secret';
const VERIFY_TOKEN = 'test-verify-token';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal, whatsapp: { appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN } });
// Configured with neither secret: every webhook and every subscription check is refused.
const unconfiguredApi = await startTestApi({ db, url, temporal });
// Its Temporal unreachable (nothing listens on port 9): no lead can be told of its message's status.
const unreachableTemporal = Connection.lazy({ address: '127.0.0.1:9' });
const apiWithoutTemporal = await startTestApi({
  db,
  url,
  temporal: { ...temporal, client: new Client({ connection: unreachableTemporal }), connection: unreachableTemporal },
  whatsapp: { appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN },
});
const owner = await createTestWorkspace(db);
await grantCredits(db, owner.workspaceId, 10);

const nowSeconds = () => Math.floor(Date.now() / 1000);
const digits = () => String(Math.floor(Math.random() * 1e9)).padStart(9, '0');

async function seedSender() {
  return db.whatsAppSender.create({
    data: {
      workspaceId: owner.workspaceId,
      e164: `+1415${digits().slice(0, 7)}`,
      provider: 'simulated',
      phoneNumberId: `pn-${randomUUID()}`,
      businessAccountId: 'waba-test',
    },
  });
}

/** An outbound marketing message the provider took (status accepted, its wamid known), with its credit hold. */
async function seedMessage(
  options: { withProviderId?: boolean; sender?: { id: string; phoneNumberId: string }; wamid?: string } = {},
) {
  const sender = options.sender ?? (await seedSender());
  const conversation = await db.whatsAppConversation.create({
    data: { workspaceId: owner.workspaceId, senderId: sender.id, contactE164: `+1650${digits().slice(0, 7)}` },
  });
  const wamid = options.wamid ?? `wamid.${randomUUID()}`;
  const message = await db.$transaction(async (tx) => {
    const created = await tx.whatsAppMessage.create({
      data: {
        workspaceId: owner.workspaceId,
        conversationId: conversation.id,
        senderId: sender.id,
        direction: 'outbound',
        type: 'template',
        category: 'marketing',
        body: 'Hello',
        status: 'accepted',
        providerMessageId: options.withProviderId === false ? null : wamid,
      },
    });
    await holdWhatsAppMessage(
      prismaSql(tx),
      { workspaceId: owner.workspaceId, messageId: created.id, category: 'marketing' },
      { type: 'system', id: 'whatsapp-webhook-test' },
    );
    return created;
  });
  return { sender, conversation, message, wamid };
}

const envelope = (entryId: string, field: string, value: object, time?: number) => ({
  object: 'whatsapp_business_account',
  entry: [{ id: entryId, ...(time !== undefined && { time }), changes: [{ field, value }] }],
});

const statusesPayload = (phoneNumberId: string, statuses: object[]) =>
  envelope('waba-test', 'messages', {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: '14155550100', phone_number_id: phoneNumberId },
    statuses,
  });

const status = (wamid: string, value: string, timestamp = nowSeconds(), extra: object = {}) => ({
  id: wamid,
  status: value,
  timestamp: String(timestamp),
  recipient_id: '16505550100',
  ...extra,
});

async function post(payload: unknown, options: { signature?: string | null; via?: typeof api } = {}) {
  const raw = JSON.stringify(payload);
  const signature = options.signature === undefined ? signWhatsAppWebhook(raw, APP_SECRET) : options.signature;
  return (options.via ?? api).request('POST', '/whatsapp/webhook', {
    body: raw,
    headers: signature === null ? {} : { 'x-hub-signature-256': signature },
  });
}

async function postOk(payload: unknown) {
  const response = await post(payload);
  expect(response.status).toBe(200);
  return (await response.json()) as { received: true; applied: number; ignored: number };
}

const ledgerOf = (messageId: string) =>
  db.creditLedgerEntry
    .findMany({ where: { referenceId: messageId } })
    .then((entries) => entries.sort((a, b) => a.kind.localeCompare(b.kind)));
const balance = async () =>
  (await db.workspace.findUniqueOrThrow({ where: { id: owner.workspaceId } })).creditBalance.toString();
const eventCount = () => db.whatsAppWebhookEvent.count();

describe('GET /whatsapp/webhook (the subscription check)', () => {
  const check = (query: string, via = api) => via.request('GET', `/whatsapp/webhook?${query}`);

  it('answers hub.challenge as text to the configured verify token', async () => {
    const response = await check(`hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1158201444`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await response.text()).toBe('1158201444');
  });

  it('refuses a wrong or missing token, another mode, or an API without a token: 403 forbidden', async () => {
    for (const [query, via] of [
      ['hub.mode=subscribe&hub.verify_token=wrong-token&hub.challenge=1', api],
      [`hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}x&hub.challenge=1`, api],
      ['hub.mode=subscribe&hub.challenge=1', api],
      [`hub.mode=unsubscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`, api],
      [`hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`, unconfiguredApi],
    ] as const) {
      const response = await check(query, via);
      expect(response.status, query).toBe(403);
      expect(await response.json()).toEqual({ error: 'forbidden' });
    }
  });

  it("counts a value's characters as the OpenAPI description does (code points): 40 emoji are a mode, 41 are refused 400", async () => {
    const mode = (count: number) => encodeURIComponent('\u{1F3FB}'.repeat(count));
    const allowed = await check(`hub.mode=${mode(40)}&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`);
    expect(allowed.status).toBe(403); // a schema-valid mode, only not "subscribe"
    const tooLong = await check(`hub.mode=${mode(41)}&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`);
    expect(tooLong.status).toBe(400);
    expect(await tooLong.json()).toMatchObject({ error: 'invalid_body', issues: [{ path: ['hub.mode'] }] });
  });
});

describe('POST /whatsapp/webhook signatures', () => {
  it("refuses a missing, malformed, wrongly keyed or other body's signature with 401, nothing changed", async () => {
    const { sender, message, wamid } = await seedMessage();
    const payload = statusesPayload(sender.phoneNumberId, [status(wamid, 'delivered')]);
    const raw = JSON.stringify(payload);
    const events = await eventCount();
    for (const signature of [
      null,
      '',
      'sha256=',
      'sha256=zz',
      signWhatsAppWebhook(raw, APP_SECRET).replace('sha256=', 'sha1='),
      signWhatsAppWebhook(raw, 'another-app-secret'),
      signWhatsAppWebhook(`${raw} `, APP_SECRET),
      signWhatsAppWebhook(raw, APP_SECRET).toUpperCase(),
    ]) {
      const response = await post(payload, { signature });
      expect(response.status, String(signature)).toBe(401);
      expect(await response.json()).toEqual({ error: 'invalid_signature' });
    }
    // Signed right, but the API has no app secret.
    expect((await post(payload, { via: unconfiguredApi })).status).toBe(401);
    // A body that is not JSON, unsigned: its signature is checked on the raw bytes before anything parses them (401).
    const garbage = await api.request('POST', '/whatsapp/webhook', { body: 'not json' });
    expect(garbage.status).toBe(401);
    expect((await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } })).status).toBe('accepted');
    expect(await eventCount()).toBe(events);
    expect((await ledgerOf(message.id)).map((entry) => entry.status)).toEqual(['pending']);
  });

  it('takes a signature of the raw bytes as sent, and judges the body only once signed (400)', async () => {
    const { sender, message, wamid } = await seedMessage();
    const raw = `{ "object": "whatsapp_business_account",\n  "entry": ${JSON.stringify(statusesPayload(sender.phoneNumberId, [status(wamid, 'sent')]).entry)} }`;
    const response = await api.request('POST', '/whatsapp/webhook', {
      body: raw,
      headers: { 'x-hub-signature-256': signWhatsAppWebhook(raw, APP_SECRET) },
    });
    expect(response.status).toBe(200);
    expect((await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } })).status).toBe('sent');
    const invalid = await post({ object: 'whatsapp_business_account', entry: [{ changes: [] }] });
    expect(invalid.status).toBe(400);
  });

  it('refuses a stale body (every event older than 7 days, a replay) with 401, nothing changed; 6 days old is taken', async () => {
    const { sender, message, wamid } = await seedMessage();
    const eightDaysAgo = nowSeconds() - 8 * 86_400;
    const stale = await post(statusesPayload(sender.phoneNumberId, [status(wamid, 'sent', eightDaysAgo)]));
    expect(stale.status).toBe(401);
    expect(await stale.json()).toEqual({ error: 'invalid_signature' });
    const staleTemplate = await post(
      envelope(
        'waba-test',
        'message_template_status_update',
        { event: 'APPROVED', message_template_id: 1 },
        eightDaysAgo,
      ),
    );
    expect(staleTemplate.status).toBe(401);
    expect((await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } })).status).toBe('accepted');
    expect(await db.whatsAppWebhookEvent.count({ where: { eventKey: { contains: wamid } } })).toBe(0);

    // A body with a fresh event is a delivery: its older events are applied with it.
    const mixed = await seedMessage();
    expect(
      await postOk(
        statusesPayload(mixed.sender.phoneNumberId, [
          status(mixed.wamid, 'sent', eightDaysAgo),
          status(mixed.wamid, 'delivered', nowSeconds()),
        ]),
      ),
    ).toEqual({ received: true, applied: 2, ignored: 0 });

    const sixDaysAgo = nowSeconds() - 6 * 86_400;
    expect(await postOk(statusesPayload(sender.phoneNumberId, [status(wamid, 'sent', sixDaysAgo)]))).toEqual({
      received: true,
      applied: 1,
      ignored: 0,
    });
    expect((await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } })).sentAt?.getTime()).toBe(
      sixDaysAgo * 1000,
    );
  });
});

describe('message statuses', () => {
  it('moves sent -> delivered -> read with their times; the hold is posted once, at delivered', async () => {
    const { sender, message, wamid } = await seedMessage();
    const before = await balance();
    const t = nowSeconds() - 60;
    expect((await postOk(statusesPayload(sender.phoneNumberId, [status(wamid, 'sent', t)]))).applied).toBe(1);
    expect((await ledgerOf(message.id)).map((entry) => entry.status)).toEqual(['pending']);

    expect((await postOk(statusesPayload(sender.phoneNumberId, [status(wamid, 'delivered', t + 5)]))).applied).toBe(1);
    const posted = await ledgerOf(message.id);
    expect(posted.map((entry) => [entry.kind, entry.status, entry.amount.toString()])).toEqual([
      ['hold', 'posted', '-0.05'],
      ['hold_release', 'posted', '0.05'],
      ['whatsapp_message', 'posted', '-0.05'],
    ]);
    const afterDelivered = await balance();
    expect(afterDelivered).toBe(before); // the hold took the price when recorded; posting keeps it taken

    expect((await postOk(statusesPayload(sender.phoneNumberId, [status(wamid, 'read', t + 9)]))).applied).toBe(1);
    expect(await ledgerOf(message.id)).toEqual(posted);
    expect(await balance()).toBe(afterDelivered);

    const stored = await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } });
    expect(stored.status).toBe('read');
    expect(stored.sentAt?.getTime()).toBe(t * 1000);
    expect(stored.deliveredAt?.getTime()).toBe((t + 5) * 1000);
    expect(stored.readAt?.getTime()).toBe((t + 9) * 1000);
    expect(stored.failedAt).toBeNull();
  });

  it('changes nothing for late, out-of-order or duplicated statuses, several in one body', async () => {
    const { sender, message, wamid } = await seedMessage();
    const t = nowSeconds() - 60;
    const first = await postOk(
      statusesPayload(sender.phoneNumberId, [status(wamid, 'delivered', t + 5), status(wamid, 'sent', t)]),
    );
    expect(first).toEqual({ received: true, applied: 1, ignored: 1 });
    const ledger = await ledgerOf(message.id);
    expect(ledger[0]!.status).toBe('posted');
    const events = await eventCount();

    for (const late of [status(wamid, 'delivered', t + 5), status(wamid, 'sent', t), status(wamid, 'delivered', t + 7)])
      expect(await postOk(statusesPayload(sender.phoneNumberId, [late]))).toEqual({
        received: true,
        applied: 0,
        ignored: 1,
      });
    const stored = await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } });
    expect(stored.status).toBe('delivered');
    expect(stored.sentAt).toBeNull();
    expect(stored.deliveredAt?.getTime()).toBe((t + 5) * 1000);
    expect(await ledgerOf(message.id)).toEqual(ledger);
    // The late "sent" was recorded the first time; the duplicates were not recorded again.
    expect(await eventCount()).toBe(events);
  });

  it('posts the hold once when the same statuses arrive at once', async () => {
    const { sender, message, wamid } = await seedMessage();
    const before = await balance();
    const delivered = statusesPayload(sender.phoneNumberId, [status(wamid, 'delivered')]);
    const read = statusesPayload(sender.phoneNumberId, [status(wamid, 'read', nowSeconds() + 1)]);
    const answers = await Promise.all([delivered, delivered, read, delivered, read].map((payload) => postOk(payload)));
    expect(answers.reduce((sum, answer) => sum + answer.applied, 0)).toBeLessThanOrEqual(2);
    expect((await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } })).status).toBe('read');
    expect((await ledgerOf(message.id)).map((entry) => [entry.kind, entry.status])).toEqual([
      ['hold', 'posted'],
      ['hold_release', 'posted'],
      ['whatsapp_message', 'posted'],
    ]);
    expect(await balance()).toBe(before);
  });

  it('fails from sent with the provider error and voids the hold; nothing moves a failed message', async () => {
    const { sender, message, wamid } = await seedMessage();
    const before = await balance();
    await postOk(statusesPayload(sender.phoneNumberId, [status(wamid, 'sent')]));
    const failed = status(wamid, 'failed', nowSeconds(), {
      errors: [{ code: 131026, title: 'Message undeliverable', message: 'Message undeliverable' }],
    });
    expect((await postOk(statusesPayload(sender.phoneNumberId, [failed]))).applied).toBe(1);
    const stored = await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } });
    expect(stored).toMatchObject({ status: 'failed', errorCode: 131026, errorTitle: 'Message undeliverable' });
    expect(stored.failedAt).not.toBeNull();
    const ledger = await ledgerOf(message.id);
    expect(ledger.find((entry) => entry.kind === 'hold')?.status).toBe('voided');
    expect(Number(await balance())).toBeCloseTo(Number(before) + 0.05, 4);

    expect((await postOk(statusesPayload(sender.phoneNumberId, [status(wamid, 'delivered')]))).applied).toBe(0);
    expect((await postOk(statusesPayload(sender.phoneNumberId, [failed]))).applied).toBe(0);
    expect((await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } })).status).toBe('failed');
    expect(await ledgerOf(message.id)).toEqual(ledger);
  });

  it('ignores failed after read, and keeps a delivered message posted when it fails', async () => {
    const read = await seedMessage();
    await postOk(statusesPayload(read.sender.phoneNumberId, [status(read.wamid, 'read')]));
    const failed = status(read.wamid, 'failed', nowSeconds(), { errors: [{ code: 131026, title: 'Undeliverable' }] });
    expect((await postOk(statusesPayload(read.sender.phoneNumberId, [failed]))).applied).toBe(0);
    const stored = await db.whatsAppMessage.findUniqueOrThrow({ where: { id: read.message.id } });
    expect(stored).toMatchObject({ status: 'read', errorCode: null, failedAt: null });
    expect((await ledgerOf(read.message.id))[0]!.status).toBe('posted');

    const delivered = await seedMessage();
    await postOk(statusesPayload(delivered.sender.phoneNumberId, [status(delivered.wamid, 'delivered')]));
    const late = status(delivered.wamid, 'failed', nowSeconds(), {
      errors: [{ code: 131026, title: 'Undeliverable' }],
    });
    expect((await postOk(statusesPayload(delivered.sender.phoneNumberId, [late]))).applied).toBe(1);
    expect((await db.whatsAppMessage.findUniqueOrThrow({ where: { id: delivered.message.id } })).status).toBe('failed');
    expect((await ledgerOf(delivered.message.id))[0]!.status).toBe('posted');
  });

  it("finds a message by the send's callback data before its wamid is recorded", async () => {
    const { sender, message, wamid } = await seedMessage({ withProviderId: false });
    const sent = status(wamid, 'sent', nowSeconds(), { biz_opaque_callback_data: message.id });
    expect((await postOk(statusesPayload(sender.phoneNumberId, [sent]))).applied).toBe(1);
    const stored = await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } });
    expect(stored).toMatchObject({ status: 'sent', providerMessageId: wamid });
  });

  it('resolves a send whose answer was lost (ambiguous) by its status: answered, or resent after the one resend', async () => {
    // A campaign's lead skips resolveAmbiguousSend when the status came within the resend window: the status settles it.
    for (const [sendAttempts, handOver] of [
      [1, 'answered'],
      [2, 'resent'],
    ] as const) {
      const { sender, message, wamid } = await seedMessage({ withProviderId: false });
      await db.whatsAppMessage.update({
        where: { id: message.id },
        data: { handOver: 'ambiguous', ambiguousAt: new Date(), sendAttempts },
      });
      const sent = status(wamid, 'sent', nowSeconds(), { biz_opaque_callback_data: message.id });
      expect((await postOk(statusesPayload(sender.phoneNumberId, [sent]))).applied).toBe(1);
      const stored = await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } });
      expect(stored).toMatchObject({ status: 'sent', providerMessageId: wamid, handOver });
    }
    // One never ambiguous (answered, or an old message) keeps its hand-over as it was.
    const { sender, message, wamid } = await seedMessage({ withProviderId: false });
    const sent = status(wamid, 'sent', nowSeconds(), { biz_opaque_callback_data: message.id });
    await postOk(statusesPayload(sender.phoneNumberId, [sent]));
    expect((await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } })).handOver).toBeNull();
  });

  it('asks for a retry (404) of a recent status of an unknown message of its number, and applies it once recorded', async () => {
    const { sender, message, wamid } = await seedMessage();
    const events = await eventCount();
    const early = `wamid.${randomUUID()}`;
    const body = statusesPayload(sender.phoneNumberId, [status(wamid, 'sent'), status(early, 'sent')]);
    const refused = await post(body);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({ error: 'unknown_whatsapp_target' });
    // What the body held of known messages is applied: the retry finds it done.
    expect((await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } })).status).toBe('sent');
    expect(await eventCount()).toBe(events + 1);

    const recorded = await seedMessage({ sender, wamid: early });
    expect(await postOk(body)).toEqual({ received: true, applied: 1, ignored: 1 });
    expect((await db.whatsAppMessage.findUniqueOrThrow({ where: { id: recorded.message.id } })).status).toBe('sent');
  });

  it('answers 200 and records nothing for an old unknown message, an unknown number, or a status it has no use for', async () => {
    const { sender, message, wamid } = await seedMessage();
    const other = await seedSender();
    const events = await eventCount();
    const tenMinutesAgo = nowSeconds() - 600;
    for (const payload of [
      statusesPayload(sender.phoneNumberId, [status(`wamid.${randomUUID()}`, 'delivered', tenMinutesAgo)]),
      statusesPayload(other.phoneNumberId, [status(wamid, 'delivered', tenMinutesAgo)]),
      statusesPayload('pn-unknown', [status(wamid, 'delivered')]),
      statusesPayload(sender.phoneNumberId, [status(wamid, 'deleted')]),
    ])
      expect(await postOk(payload)).toEqual({ received: true, applied: 0, ignored: 1 });
    expect(await eventCount()).toBe(events);
    expect((await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } })).status).toBe('accepted');
  });
});

describe("a campaign's lead told of its message's status", () => {
  it('answers 503 temporal_unavailable when the lead cannot be told, the status committed; the retry is answered 200 and changes nothing', async () => {
    const { message, sender, wamid } = await seedMessage();
    const campaign = await db.campaign.create({ data: { workspaceId: owner.workspaceId, name: 'Told' } });
    const lead = await db.lead.create({
      data: {
        workspaceId: owner.workspaceId,
        campaignId: campaign.id,
        idempotencyKey: randomUUID(),
        phone: '+16505550100',
        // No workflow runs under this id: once Temporal answers, the lead is "ended", which needs nothing.
        workflowId: `told-${randomUUID()}`,
        requestId: randomUUID(),
      },
    });
    await db.whatsAppMessage.update({ where: { id: message.id }, data: { leadId: lead.id, campaignId: campaign.id } });
    const payload = statusesPayload(sender.phoneNumberId, [status(wamid, 'delivered')]);

    const untold = await post(payload, { via: apiWithoutTemporal });
    expect(untold.status).toBe(503);
    expect(await untold.json()).toMatchObject({ error: 'temporal_unavailable' });
    expect(untold.headers.get('retry-after')).toBe('5');
    // Committed all the same: the provider's retry applies nothing twice.
    expect(await db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({
      status: 'delivered',
    });
    const posted = await ledgerOf(message.id);

    expect(await postOk(payload)).toMatchObject({ applied: 0, ignored: 1 });
    expect(await ledgerOf(message.id)).toEqual(posted);
  });

  it('answers 200 when Temporal cannot be reached but no lead waits on the message', async () => {
    const { sender, wamid } = await seedMessage();
    const response = await post(statusesPayload(sender.phoneNumberId, [status(wamid, 'delivered')]), {
      via: apiWithoutTemporal,
    });
    expect(response.status).toBe(200);
  });
});

describe('inbound messages', () => {
  const inboundPayload = (phoneNumberId: string, from: string, message: object, name = 'Ada Lovelace') =>
    envelope('waba-test', 'messages', {
      messaging_product: 'whatsapp',
      metadata: { display_phone_number: '14155550100', phone_number_id: phoneNumberId },
      contacts: [{ profile: { name }, wa_id: from }],
      messages: [{ from, ...message }],
    });

  it("lands in the contact's conversation, opens the window, and is idempotent by its id", async () => {
    const sender = await seedSender();
    const from = `1650${digits().slice(0, 7)}`;
    const t = nowSeconds() - 30;
    const text = { id: `wamid.${randomUUID()}`, timestamp: String(t), type: 'text', text: { body: 'Is it still on?' } };
    expect(await postOk(inboundPayload(sender.phoneNumberId, from, text))).toEqual({
      received: true,
      applied: 1,
      ignored: 0,
    });
    const conversation = await db.whatsAppConversation.findUniqueOrThrow({
      where: { senderId_contactE164: { senderId: sender.id, contactE164: `+${from}` } },
    });
    expect(conversation).toMatchObject({
      workspaceId: owner.workspaceId,
      contactName: 'Ada Lovelace',
      archived: false,
    });
    expect(conversation.lastInboundAt?.getTime()).toBe(t * 1000);
    expect(conversation.lastMessageAt.getTime()).toBe(t * 1000);
    const messages = await db.whatsAppMessage.findMany({ where: { conversationId: conversation.id } });
    expect(messages).toEqual([
      expect.objectContaining({
        direction: 'inbound',
        type: 'text',
        body: 'Is it still on?',
        status: 'received',
        providerMessageId: text.id,
        senderId: sender.id,
        workspaceId: owner.workspaceId,
      }),
    ]);

    expect(await postOk(inboundPayload(sender.phoneNumberId, from, text))).toEqual({
      received: true,
      applied: 0,
      ignored: 1,
    });
    expect(await db.whatsAppMessage.count({ where: { conversationId: conversation.id } })).toBe(1);

    // A later reply of another type moves the window on; its body says what it was.
    const image = { id: `wamid.${randomUUID()}`, timestamp: String(t + 20), type: 'image', image: { id: 'media-1' } };
    await postOk(inboundPayload(sender.phoneNumberId, from, image));
    const moved = await db.whatsAppConversation.findUniqueOrThrow({ where: { id: conversation.id } });
    expect(moved.lastInboundAt?.getTime()).toBe((t + 20) * 1000);
    expect((await db.whatsAppMessage.findFirstOrThrow({ where: { providerMessageId: image.id } })).body).toBe(
      '[image]',
    );
    // An older message arriving late never moves the window back.
    const older = { id: `wamid.${randomUUID()}`, timestamp: String(t - 100), type: 'text', text: { body: 'earlier' } };
    await postOk(inboundPayload(sender.phoneNumberId, from, older));
    expect(
      (await db.whatsAppConversation.findUniqueOrThrow({ where: { id: conversation.id } })).lastInboundAt?.getTime(),
    ).toBe((t + 20) * 1000);
  });

  it('unarchives the conversation for a message newer than its archiving, not for an older one', async () => {
    const sender = await seedSender();
    const from = `1650${digits().slice(0, 7)}`;
    const archivedAt = new Date((nowSeconds() - 60) * 1000);
    const conversation = await db.whatsAppConversation.create({
      data: {
        workspaceId: owner.workspaceId,
        senderId: sender.id,
        contactE164: `+${from}`,
        archived: true,
        archivedAt,
      },
    });
    const older = {
      id: `wamid.${randomUUID()}`,
      timestamp: String(nowSeconds() - 120),
      type: 'text',
      text: { body: 'a' },
    };
    await postOk(inboundPayload(sender.phoneNumberId, from, older));
    expect(await db.whatsAppConversation.findUniqueOrThrow({ where: { id: conversation.id } })).toMatchObject({
      archived: true,
      archivedAt,
    });
    const newer = { id: `wamid.${randomUUID()}`, timestamp: String(nowSeconds()), type: 'text', text: { body: 'b' } };
    await postOk(inboundPayload(sender.phoneNumberId, from, newer));
    expect(await db.whatsAppConversation.findUniqueOrThrow({ where: { id: conversation.id } })).toMatchObject({
      archived: false,
      archivedAt: null,
    });
  });

  it('records nothing for a number not connected here', async () => {
    const events = await eventCount();
    const message = { id: `wamid.${randomUUID()}`, timestamp: String(nowSeconds()), type: 'text', text: { body: 'x' } };
    expect(await postOk(inboundPayload('pn-unknown', '16505550100', message))).toEqual({
      received: true,
      applied: 0,
      ignored: 1,
    });
    expect(await eventCount()).toBe(events);
    expect(await db.whatsAppMessage.count({ where: { providerMessageId: message.id } })).toBe(0);
  });
});

describe('template reviews and quality', () => {
  async function seedTemplate() {
    const providerTemplateId = String(100_000_000 + Math.floor(Math.random() * 899_999_999));
    const template = await db.whatsAppTemplate.create({
      data: {
        workspaceId: owner.workspaceId,
        name: `offer_${providerTemplateId}`,
        language: 'en_US',
        category: 'marketing',
        body: 'Hi {{1}}',
        variableCount: 1,
        provider: 'simulated',
        providerTemplateId,
      },
    });
    return { template, numericId: Number(providerTemplateId) };
  }
  const review = (id: number, event: string, time: number, reason = 'NONE') =>
    envelope(
      'waba-test',
      'message_template_status_update',
      { event, message_template_id: id, message_template_name: 'offer', message_template_language: 'en_US', reason },
      time,
    );
  const quality = (id: number, score: string, time: number) =>
    envelope(
      'waba-test',
      'message_template_quality_update',
      { previous_quality_score: 'UNKNOWN', new_quality_score: score, message_template_id: id },
      time,
    );
  const stored = (id: string) => db.whatsAppTemplate.findUniqueOrThrow({ where: { id } });

  it('stores each review outcome in order, with the reason of a rejection; duplicates and older events change nothing', async () => {
    const { template, numericId } = await seedTemplate();
    const t = nowSeconds() + 1;
    expect((await postOk(review(numericId, 'APPROVED', t))).applied).toBe(1);
    expect(await stored(template.id)).toMatchObject({ status: 'APPROVED', rejectedReason: null });
    expect((await stored(template.id)).statusUpdatedAt.getTime()).toBe(t * 1000);
    expect((await postOk(review(numericId, 'APPROVED', t))).applied).toBe(0);

    expect((await postOk(review(numericId, 'PAUSED', t + 10))).applied).toBe(1);
    expect((await postOk(review(numericId, 'DISABLED', t + 5))).applied).toBe(0);
    expect((await stored(template.id)).status).toBe('PAUSED');

    expect((await postOk(review(numericId, 'REJECTED', t + 20, 'INVALID_FORMAT'))).applied).toBe(1);
    expect(await stored(template.id)).toMatchObject({ status: 'REJECTED', rejectedReason: 'INVALID_FORMAT' });

    // Recorded, and ignored: events the service has no status for.
    const events = await eventCount();
    expect(await postOk(review(numericId, 'PENDING_DELETION', t + 30))).toEqual({
      received: true,
      applied: 0,
      ignored: 1,
    });
    expect(await eventCount()).toBe(events + 1);
    expect((await stored(template.id)).status).toBe('REJECTED');
  });

  it('accepts a review in the same second the template was recorded', async () => {
    const { template, numericId } = await seedTemplate();
    expect(
      (await postOk(review(numericId, 'APPROVED', Math.floor(template.statusUpdatedAt.getTime() / 1000)))).applied,
    ).toBe(1);
    expect((await stored(template.id)).status).toBe('APPROVED');
  });

  it('stores the quality rating, never an older one over a newer', async () => {
    const { template, numericId } = await seedTemplate();
    const t = nowSeconds();
    expect((await postOk(quality(numericId, 'YELLOW', t))).applied).toBe(1);
    expect((await stored(template.id)).qualityRating).toBe('YELLOW');
    expect((await postOk(quality(numericId, 'YELLOW', t))).applied).toBe(0);
    expect((await postOk(quality(numericId, 'GREEN', t - 50))).applied).toBe(0);
    expect((await stored(template.id)).qualityRating).toBe('YELLOW');
    expect((await postOk(quality(numericId, 'RED', t + 50))).applied).toBe(1);
    expect((await stored(template.id)).qualityRating).toBe('RED');
  });

  it('asks for a retry of a recent review of an unknown template of its Business Account; ignores the rest', async () => {
    const events = await eventCount();
    const unknown = review(999_999_999_999, 'APPROVED', nowSeconds());
    const refused = await post(unknown);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({ error: 'unknown_whatsapp_target' });
    expect((await post(quality(999_999_999_999, 'RED', nowSeconds()))).status).toBe(404);
    expect((await postOk(review(999_999_999_999, 'APPROVED', nowSeconds() - 600))).ignored).toBe(1);
    expect((await postOk({ ...unknown, entry: [{ ...unknown.entry[0]!, id: 'waba-foreign' }] })).ignored).toBe(1);
    expect(await eventCount()).toBe(events);
  });

  it('records any other field once', async () => {
    const events = await eventCount();
    const other = envelope('waba-test', 'account_update', { event: 'VERIFIED_ACCOUNT' }, nowSeconds());
    expect(await postOk(other)).toEqual({ received: true, applied: 0, ignored: 1 });
    expect(await postOk(other)).toEqual({ received: true, applied: 0, ignored: 1 });
    expect(await eventCount()).toBe(events + 1);
  });
});

describe('with the simulated provider over HTTP', async () => {
  // The provider posts to an API configured with its app secret; its webhooks overtake what they name.
  const receiving = await startTestApi({ db, url, temporal, whatsapp: { appSecret: TEST_WHATSAPP_APP_SECRET } });
  const whatsapp = await startTestWhatsApp(db, { webhookUrl: `${receiving.baseUrl}/whatsapp/webhook` });

  it("applies a template's review that arrived before its id was recorded, then sends and settles by its statuses", async () => {
    const sender = await seedSender();
    const name = `offer_pause_${digits()}`;
    const template = await db.whatsAppTemplate.create({
      data: {
        workspaceId: owner.workspaceId,
        name,
        language: 'en_US',
        category: 'marketing',
        body: 'Hi {{1}}',
        variableCount: 1,
        provider: 'simulated',
      },
    });
    const submitted = await whatsapp.client.submitTemplate({
      businessAccountId: sender.businessAccountId,
      name,
      language: 'en_US',
      category: 'marketing',
      body: 'Hi {{1}}',
    });
    // Its review (2 ms later) is refused 404 and retried until the id is there.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await db.whatsAppTemplate.update({ where: { id: template.id }, data: { providerTemplateId: submitted.id } });
    const paused = await until(
      () => db.whatsAppTemplate.findUniqueOrThrow({ where: { id: template.id } }),
      (row) => row.status === 'PAUSED',
      10_000,
    );
    expect(paused.qualityRating).toBe('RED');

    // Sends before the template was paused are not what this test is about: a fresh approved template.
    const approvedName = `offer_${digits()}`;
    await whatsapp.client.submitTemplate({
      businessAccountId: sender.businessAccountId,
      name: approvedName,
      language: 'en_US',
      category: 'marketing',
      body: 'Hi {{1}}',
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const outcomes = [];
    for (const lastDigit of ['5', '8']) {
      const { message } = await seedMessage({ sender, withProviderId: false });
      await whatsapp.client.sendMessage({
        phoneNumberId: sender.phoneNumberId,
        to: `+1650555010${lastDigit}`,
        callbackData: message.id,
        message: { type: 'template', template: { name: approvedName, language: 'en_US', parameters: ['Ada'] } },
      });
      outcomes.push(
        await until(
          () => db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } }),
          (row) => row.status === (lastDigit === '5' ? 'read' : 'failed'),
          10_000,
        ),
      );
    }
    const [read, failed] = outcomes;
    expect(read!.providerMessageId).toMatch(/./);
    expect([read!.sentAt, read!.deliveredAt, read!.readAt].every(Boolean)).toBe(true);
    expect((await ledgerOf(read!.id)).map((entry) => entry.status)).toEqual(['posted', 'posted', 'posted']);
    expect(failed).toMatchObject({ errorCode: 131026 });
    // The hold is voided just after the status is committed, by the same webhook.
    const settled = await until(
      () => ledgerOf(failed!.id),
      (entries) => entries.every((entry) => entry.status !== 'pending'),
      10_000,
    );
    expect(settled.map((entry) => [entry.kind, entry.status])).toEqual([
      ['hold', 'voided'],
      ['hold_release', 'posted'],
    ]);
  });

  it("lands a contact's reply in its conversation", async () => {
    const sender = await seedSender();
    const { id } = await whatsapp.reply(sender.phoneNumberId, '+16505550142', 'Call me later', 'Grace');
    const message = await until(
      () => db.whatsAppMessage.findFirst({ where: { senderId: sender.id, providerMessageId: id } }),
      (row) => row !== null,
      10_000,
    );
    expect(message).toMatchObject({ direction: 'inbound', body: 'Call me later', status: 'received' });
    const conversation = await db.whatsAppConversation.findUniqueOrThrow({ where: { id: message!.conversationId } });
    expect(conversation).toMatchObject({ contactE164: '+16505550142', contactName: 'Grace' });
    expect(conversation.lastInboundAt).not.toBeNull();
  });
});
