import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import {
  WHATSAPP_ERROR,
  WhatsAppProviderError,
  type WhatsAppProvider,
  type WhatsAppSendRequest,
} from '../../lib/whatsapp/provider';
import { whatsAppWebhookSchema } from '../../lib/whatsapp/webhook';
import { createSimulatedWhatsAppClient } from '../../lib/whatsapp/graph-client';
import { templateReviewSteps } from '../../simulators/meta-twin/rules';
import { createSimulatedWhatsAppProvider } from '../../simulators/meta-twin/server';
import { useTestDatabase } from '../support/database';
import { providerRecord, startTestWhatsApp, TEST_WHATSAPP_APP_SECRET } from '../support/whatsapp';

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: WebhookBody;
  status: number;
}
interface WebhookBody {
  object: string;
  entry: { id: string; time: number; changes: { field: string; value: Record<string, unknown> }[] }[];
}
interface StatusValue {
  messaging_product: string;
  metadata: { display_phone_number: string; phone_number_id: string };
  statuses: {
    id: string;
    status: string;
    timestamp: string;
    recipient_id: string;
    biz_opaque_callback_data?: string;
    errors?: { code: number; title: string }[];
    pricing?: { category: string };
  }[];
}

/** The app's webhook endpoint as the test plays it: records every request, answers what `answer` says (default 200). */
async function startReceiver() {
  const requests: Received[] = [];
  const receiver = {
    requests,
    answer: (_raw: string): number => 200,
    /** The requests answered 2xx: what the app took. */
    accepted: () => requests.filter((request) => request.status >= 200 && request.status <= 299),
    url: '',
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const status = receiver.answer(raw);
      // Only webhooks (POSTs) are recorded; a client pointed here by mistake gets the answer alone.
      if (req.method === 'POST')
        requests.push({ headers: req.headers, raw, body: JSON.parse(raw) as WebhookBody, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/whatsapp/webhook`;
  return receiver;
}

async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const receiver = await startReceiver();
const { db } = await useTestDatabase();
const whatsapp = await startTestWhatsApp(db, { webhookUrl: receiver.url });
const { client } = whatsapp;
/** Databases of their own for the restart (two providers one after the other) and the throughput limit. */
const restartDatabase = await useTestDatabase();
const restartReceiver = await startReceiver();
const limitedDatabase = await useTestDatabase();
const limited = await startTestWhatsApp(limitedDatabase.db, { webhookUrl: receiver.url, messagesPerSecond: 3 });

const WABA = '410000000000001';
const PHONE_NUMBER_ID = '120000000000001';
const changesOf = (requests: Received[], field: string) =>
  requests.flatMap((request) =>
    request.body.entry.flatMap((entry) =>
      entry.changes.filter((change) => change.field === field).map((change) => ({ entry, value: change.value })),
    ),
  );
/** The statuses the app took for one message, in the order they arrived. */
const statusesOf = (wamid: string) =>
  changesOf(receiver.accepted(), 'messages')
    .flatMap(({ value }) => (value as unknown as StatusValue).statuses ?? [])
    .filter((status) => status.id === wamid);
const templateEventsOf = (templateId: string) =>
  receiver
    .accepted()
    .flatMap((request) => request.body.entry.flatMap((entry) => entry.changes))
    .filter((change) => change.value.message_template_id === Number(templateId))
    .map(({ field, value }) =>
      field === 'message_template_status_update'
        ? `${String(value.event)}:${String(value.reason)}`
        : `quality:${String(value.previous_quality_score)}->${String(value.new_quality_score)}`,
    );

let templateCount = 0;
/** Submits a template named `<prefix>_<n>` and waits until the simulator's review of it is final. */
async function reviewedTemplate(prefix: string, body = 'Hello {{1}}, your order {{2}} is ready.') {
  const name = `${prefix}_${++templateCount}`;
  const submitted = await client.submitTemplate({
    businessAccountId: WABA,
    name,
    language: 'en_US',
    category: 'utility',
    body,
  });
  await eventually(() => expect(templateEventsOf(submitted.id)).toHaveLength(templateReviewSteps(name).length));
  return { ...submitted, name };
}

/** A send as the service makes one: its own id as the callback data the statuses echo. */
const sendRequest = (
  to: string,
  message: WhatsAppSendRequest['message'],
  { phoneNumberId = PHONE_NUMBER_ID, clientKey = randomUUID() as string } = {},
) => ({ phoneNumberId, to, clientKey, callbackData: `ours-${clientKey}`, message });
const templateMessage = (to: string, name: string, parameters = ['Ann', 'A-17'], clientKey: string = randomUUID()) =>
  sendRequest(to, { type: 'template', template: { name, language: 'en_US', parameters } }, { clientKey });

async function refusal(send: Promise<unknown>): Promise<WhatsAppProviderError> {
  const error = await send.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WhatsAppProviderError);
  return error as WhatsAppProviderError;
}

describe('the simulated WhatsApp provider', () => {
  it('reviews templates by their name: approved, rejected, paused, disabled, with their webhooks and GET', async () => {
    const approved = await reviewedTemplate('order_ready');
    const rejected = await reviewedTemplate('will_reject');
    const paused = await reviewedTemplate('to_pause');
    const disabled = await reviewedTemplate('to_disable');
    for (const submitted of [approved, rejected, paused, disabled]) expect(submitted.status).toBe('PENDING');

    expect(templateEventsOf(approved.id)).toEqual(['APPROVED:NONE', 'quality:UNKNOWN->GREEN']);
    expect(templateEventsOf(rejected.id)).toEqual(['REJECTED:INVALID_FORMAT']);
    expect(templateEventsOf(paused.id)).toEqual([
      'APPROVED:NONE',
      'quality:UNKNOWN->GREEN',
      'quality:GREEN->RED',
      'PAUSED:NONE',
    ]);
    expect(templateEventsOf(disabled.id)).toEqual([
      'APPROVED:NONE',
      'quality:UNKNOWN->GREEN',
      'quality:GREEN->RED',
      'DISABLED:NONE',
    ]);

    expect(await client.getTemplate(approved.id)).toEqual({
      status: 'APPROVED',
      rejectedReason: null,
      qualityRating: 'GREEN',
    });
    expect(await client.getTemplate(rejected.id)).toEqual({
      status: 'REJECTED',
      rejectedReason: 'INVALID_FORMAT',
      qualityRating: 'UNKNOWN',
    });
    expect(await client.getTemplate(paused.id)).toEqual({
      status: 'PAUSED',
      rejectedReason: null,
      qualityRating: 'RED',
    });
    expect(await client.getTemplate(disabled.id)).toEqual({
      status: 'DISABLED',
      rejectedReason: null,
      qualityRating: 'RED',
    });

    // Meta's envelope: the account's id, the template's name and language; the row keeps what was delivered.
    const [update] = changesOf(receiver.accepted(), 'message_template_status_update').filter(
      ({ value }) => value.message_template_id === Number(rejected.id),
    );
    expect(update!.entry.id).toBe(WABA);
    expect(update!.value).toMatchObject({ message_template_name: rejected.name, message_template_language: 'en_US' });
    await eventually(async () =>
      expect(await providerRecord(db).template(paused.id)).toMatchObject({
        status: 'PAUSED',
        qualityScore: 'RED',
        eventsDelivered: 4,
      }),
    );
  });

  it('refuses a second template of the same name and language in the account, and an unknown template id', async () => {
    const first = await reviewedTemplate('twice');
    const again = await refusal(
      client.submitTemplate({
        businessAccountId: WABA,
        name: first.name,
        language: 'en_US',
        category: 'marketing',
        body: 'Hi',
      }),
    );
    expect([again.code, again.httpStatus]).toEqual([100, 400]);
    const unknown = await refusal(client.getTemplate('999999999999999'));
    expect([unknown.code, unknown.httpStatus]).toEqual([100, 400]);
  });

  it('sends only approved templates, with as many parameters as the body has variables', async () => {
    const approved = await reviewedTemplate('shipping');
    const rejected = await reviewedTemplate('reject_me');
    const paused = await reviewedTemplate('pause_me');
    const disabled = await reviewedTemplate('disable_me');
    const to = '+15550100003';
    expect((await refusal(client.sendMessage(templateMessage(to, 'never_submitted')))).code).toBe(
      WHATSAPP_ERROR.templateNotFound,
    );
    expect((await refusal(client.sendMessage(templateMessage(to, rejected.name)))).code).toBe(
      WHATSAPP_ERROR.templateNotFound,
    );
    expect((await refusal(client.sendMessage(templateMessage(to, paused.name)))).code).toBe(
      WHATSAPP_ERROR.templatePaused,
    );
    const disabledRefusal = await refusal(client.sendMessage(templateMessage(to, disabled.name)));
    expect([disabledRefusal.code, disabledRefusal.title, disabledRefusal.httpStatus]).toEqual([
      WHATSAPP_ERROR.templateDisabled,
      'Template is Disabled',
      400,
    ]);
    expect((await refusal(client.sendMessage(templateMessage(to, approved.name, ['Ann'])))).code).toBe(132000);
    const { messageId } = await client.sendMessage(templateMessage(to, approved.name));
    expect(messageId).toMatch(/^wamid\./);
    // Refusals record nothing: one message to this number.
    expect(await providerRecord(db).count('message', `"to" = '15550100003'`)).toBe(1);
  });

  it("answers in Meta's shapes: the send's contacts and message id, a refusal's error object", async () => {
    const approved = await reviewedTemplate('shape');
    const post = (body: unknown) =>
      fetch(`${whatsapp.baseUrl}/v21.0/${PHONE_NUMBER_ID}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'Idempotency-Key': randomUUID() },
        body: JSON.stringify(body),
      });
    const sent = await post({
      messaging_product: 'whatsapp',
      to: '+1 555 010 0013',
      type: 'template',
      template: {
        name: approved.name,
        language: { code: 'en_US' },
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
        ],
      },
    });
    expect(sent.status).toBe(200);
    const answer = (await sent.json()) as {
      messaging_product: string;
      contacts: unknown[];
      messages: { id: string }[];
    };
    expect(answer).toMatchObject({
      messaging_product: 'whatsapp',
      contacts: [{ input: '+1 555 010 0013', wa_id: '15550100013' }],
      messages: [{ id: expect.stringMatching(/^wamid\./) as string, message_status: 'accepted' }],
    });

    const refused = await post({
      messaging_product: 'whatsapp',
      to: '15550100023',
      type: 'text',
      text: { body: 'hi' },
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: {
        message: '(#131047) Re-engagement message',
        type: 'OAuthException',
        code: 131047,
        error_data: { messaging_product: 'whatsapp', details: expect.any(String) as string },
        fbtrace_id: expect.any(String) as string,
      },
    });
    const invalid = await post({ messaging_product: 'whatsapp', to: '15550100023', type: 'text' });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { code: number; type: string } }).error).toMatchObject({
      code: 100,
      type: 'OAuthException',
    });
  });

  it('reports statuses by the recipient’s last digit, in order, as Meta shapes them', async () => {
    const approved = await reviewedTemplate('statuses');
    const expected: Record<string, string[]> = {
      '+15550200009': ['failed'],
      '+15550200008': ['sent', 'failed'],
      '+15550200007': ['sent', 'delivered'],
      '+15550200006': ['sent', 'delivered', 'read'],
      '+15550200000': ['sent', 'delivered', 'read'],
    };
    const sent = await Promise.all(
      Object.keys(expected).map(async (to) => {
        const request = templateMessage(to, approved.name);
        return { to, callbackData: request.callbackData, ...(await client.sendMessage(request)) };
      }),
    );
    for (const { to, messageId } of sent)
      await eventually(() => expect(statusesOf(messageId).map((status) => status.status)).toEqual(expected[to]));
    // Nothing more comes after the last status.
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const { to, messageId, callbackData } of sent) {
      const statuses = statusesOf(messageId);
      expect(statuses.map((status) => status.biz_opaque_callback_data)).toEqual(statuses.map(() => callbackData));
      expect(statuses.map((status) => status.status)).toEqual(expected[to]);
      expect(statuses.every((status) => status.recipient_id === to.slice(1) && /^\d{10}$/.test(status.timestamp))).toBe(
        true,
      );
      const times = statuses.map((status) => Number(status.timestamp));
      expect(times).toEqual([...times].sort((a, b) => a - b));
      const failed = statuses.find((status) => status.status === 'failed');
      if (failed)
        expect(failed.errors).toEqual([
          expect.objectContaining({ code: WHATSAPP_ERROR.undeliverable, title: 'Message undeliverable' }),
        ]);
      else expect(statuses[0]!.pricing).toMatchObject({ category: 'utility' });
    }
    const [change] = changesOf(receiver.accepted(), 'messages').filter(({ value }) =>
      (value as unknown as StatusValue).statuses?.some((status) => status.id === sent[0]!.messageId),
    );
    expect(change!.value).toMatchObject({
      messaging_product: 'whatsapp',
      metadata: { phone_number_id: PHONE_NUMBER_ID },
    });
    expect(receiver.accepted().every((request) => request.body.object === 'whatsapp_business_account')).toBe(true);
  });

  it('signs every webhook with X-Hub-Signature-256: the HMAC-SHA256 of the raw body with the app secret', async () => {
    await reviewedTemplate('signed');
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) {
      const header = request.headers['x-hub-signature-256'];
      expect(header).toBe(`sha256=${createHmac('sha256', TEST_WHATSAPP_APP_SECRET).update(request.raw).digest('hex')}`);
      expect(header).not.toBe(
        `sha256=${createHmac('sha256', 'another-app-secret-value').update(request.raw).digest('hex')}`,
      );
    }
  });

  it('posts webhooks the app’s webhook schema takes (lib/whatsapp/webhook.ts)', async () => {
    await reviewedTemplate('schema');
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests)
      expect(whatsAppWebhookSchema.safeParse(request.body).error).toBeUndefined();
  });

  it('still answers a repeated Idempotency-Key with the first message, though the Graph client sends none (Meta has none)', async () => {
    const approved = await reviewedTemplate('idempotent');
    const key = randomUUID();
    const post = () =>
      fetch(`${whatsapp.baseUrl}/v23.0/${PHONE_NUMBER_ID}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify({
          messaging_product: 'whatsapp',
          to: '+15550300001',
          type: 'template',
          template: {
            name: approved.name,
            language: { code: 'en_US' },
            components: [
              {
                type: 'body',
                parameters: [
                  { type: 'text', text: 'Ann' },
                  { type: 'text', text: 'A-17' },
                ],
              },
            ],
          },
        }),
      }).then(async (response) => ((await response.json()) as { messages: { id: string }[] }).messages[0]!.id);
    const first = await post();
    expect(await post()).toBe(first);
    expect(await providerRecord(db).count('message', `"clientKey" = $1`, key)).toBe(1);
    // The client: two sends are two messages.
    const one = await client.sendMessage(templateMessage('+15550300001', approved.name));
    const two = await client.sendMessage(templateMessage('+15550300001', approved.name));
    expect(one.messageId).not.toBe(two.messageId);
    await eventually(() =>
      expect(statusesOf(first).map((status) => status.status)).toEqual(['sent', 'delivered', 'read']),
    );
  });

  it('takes free-form text only within 24 hours of the contact’s last message to that number', async () => {
    const contact = '+15550400002';
    const text = (phoneNumberId = PHONE_NUMBER_ID) =>
      sendRequest(contact, { type: 'text', text: 'Your table is ready' }, { phoneNumberId });
    const outside = await refusal(client.sendMessage(text()));
    expect([outside.code, outside.title, outside.httpStatus]).toEqual([
      WHATSAPP_ERROR.reEngagement,
      'Re-engagement message',
      400,
    ]);

    const inbound = await whatsapp.reply(PHONE_NUMBER_ID, contact, 'Is my table ready?', 'Ann Lee');
    const [change] = await eventually(() => {
      const found = changesOf(receiver.accepted(), 'messages').filter(({ value }) =>
        (value.messages as { id: string }[] | undefined)?.some((message) => message.id === inbound.id),
      );
      expect(found).toHaveLength(1);
      return found;
    });
    expect(change!.value).toMatchObject({
      metadata: { phone_number_id: PHONE_NUMBER_ID },
      contacts: [{ profile: { name: 'Ann Lee' }, wa_id: '15550400002' }],
      messages: [{ from: '15550400002', id: inbound.id, type: 'text', text: { body: 'Is my table ready?' } }],
    });

    const { messageId } = await client.sendMessage(text());
    await eventually(() =>
      expect(statusesOf(messageId).map((status) => status.status)).toEqual(['sent', 'delivered', 'read']),
    );
    // The window is the number's: another number of the business has none with this contact.
    expect((await refusal(client.sendMessage(text('120000000000002')))).code).toBe(WHATSAPP_ERROR.reEngagement);
    // 25 hours later the window is closed again.
    await providerRecord(db).ageMessages(25 * 60 * 60 * 1000, 'id = $2', inbound.id);
    expect((await refusal(client.sendMessage(text()))).code).toBe(WHATSAPP_ERROR.reEngagement);
  });

  it('retries a webhook with backoff until the app answers 2xx', async () => {
    const approved = await reviewedTemplate('retried');
    let refusals = 0;
    receiver.answer = (raw) => (raw.includes('"15550500003"') && refusals++ < 3 ? 500 : 200);
    try {
      const { messageId } = await client.sendMessage(templateMessage('+15550500003', approved.name));
      await eventually(() =>
        expect(statusesOf(messageId).map((status) => status.status)).toEqual(['sent', 'delivered', 'read']),
      );
      const attempts = receiver.requests.filter((request) => request.raw.includes(messageId));
      expect(attempts.map((request) => request.status)).toEqual([500, 500, 500, 200, 200, 200]);
      // The same body each time, 'sent' first: nothing later overtook the refused one.
      expect(new Set(attempts.slice(0, 4).map((request) => request.raw)).size).toBe(1);
    } finally {
      receiver.answer = () => 200;
    }
  });

  it('maps an answer that is not Meta’s to a plain error, for the caller to retry', async () => {
    const lost = createSimulatedWhatsAppClient({ baseUrl: 'http://127.0.0.1:9' });
    const error = await lost.getTemplate('1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(WhatsAppProviderError);
    // The receiver answers `{}` with 502: not Meta's error shape either.
    receiver.answer = () => 502;
    try {
      const proxied = createSimulatedWhatsAppClient({ baseUrl: receiver.url.replace('/whatsapp/webhook', '') });
      const refused = await proxied.getTemplate('1').catch((caught: unknown) => caught);
      expect(refused).toBeInstanceOf(Error);
      expect(refused).not.toBeInstanceOf(WhatsAppProviderError);
      expect(String(refused)).toContain('502');
    } finally {
      receiver.answer = () => 200;
    }
  });
});

describe('the simulated WhatsApp provider across a restart', () => {
  it('delivers what it had left after it restarts, in order, and writes down what was delivered', async () => {
    const own = restartDatabase;
    const down = restartReceiver;
    down.answer = () => 503;
    const options = {
      sql: own.db.sql,
      appSecret: TEST_WHATSAPP_APP_SECRET,
      webhookUrl: down.url,
      timeScale: 0.001,
      retry: { firstMs: 20, maxMs: 100 },
    };
    const first = createSimulatedWhatsAppProvider(options);
    const firstClient: WhatsAppProvider = createSimulatedWhatsAppClient({ baseUrl: await first.listen(0) });
    const template = await firstClient.submitTemplate({
      businessAccountId: WABA,
      name: 'restart',
      language: 'en',
      category: 'marketing',
      body: 'Hi',
    });
    await eventually(async () => expect((await firstClient.getTemplate(template.id)).status).toBe('APPROVED'));
    const { messageId } = await firstClient.sendMessage(
      sendRequest('+15550600004', { type: 'template', template: { name: 'restart', language: 'en', parameters: [] } }),
    );
    await eventually(() =>
      expect(down.requests.filter((request) => request.raw.includes(messageId)).length).toBeGreaterThan(1),
    );
    await first.close();
    expect(await providerRecord(own.db).message(messageId)).toMatchObject({
      eventsDelivered: 0,
    });

    down.answer = () => 200;
    const second = createSimulatedWhatsAppProvider(options);
    await second.listen(0);
    try {
      await eventually(async () =>
        expect(await providerRecord(own.db).message(messageId)).toMatchObject({
          eventsDelivered: 3,
        }),
      );
      const statuses = changesOf(down.accepted(), 'messages')
        .flatMap(({ value }) => (value as unknown as StatusValue).statuses ?? [])
        .filter((status) => status.id === messageId)
        .map((status) => status.status);
      expect(statuses).toEqual(['sent', 'delivered', 'read']);
      await eventually(async () =>
        expect(await providerRecord(own.db).template(template.id)).toMatchObject({
          status: 'APPROVED',
          qualityScore: 'GREEN',
          eventsDelivered: 2,
        }),
      );
    } finally {
      await second.close();
    }
  });
});

describe('the simulated WhatsApp provider with a throughput limit', () => {
  it('refuses more new sends from one number per second than the limit with 130429, other numbers unaffected', async () => {
    await limited.client.submitTemplate({
      businessAccountId: WABA,
      name: 'limited',
      language: 'en',
      category: 'marketing',
      body: 'Hi',
    });
    const message: WhatsAppSendRequest['message'] = {
      type: 'template',
      template: { name: 'limited', language: 'en', parameters: [] },
    };
    await eventually(async () => {
      await limited.client.sendMessage(sendRequest('+15550700001', message, { phoneNumberId: '130000000000099' }));
    });
    const started = Date.now();
    const requests = Array.from({ length: 4 }, () => sendRequest('+15550700001', message));
    const outcomes = await Promise.all(
      requests.map((request) =>
        limited.client.sendMessage(request).then(
          () => 'sent',
          (error: unknown) => (error instanceof WhatsAppProviderError ? error.code : String(error)),
        ),
      ),
    );
    // Every send was taken (or refused) by the time it was answered: the number's second ends at most 1 s after this.
    const answeredAt = Date.now();
    expect(answeredAt - started).toBeLessThan(1_000);
    expect(outcomes.filter((outcome) => outcome === 'sent')).toHaveLength(3);
    expect(outcomes.filter((outcome) => outcome === WHATSAPP_ERROR.rateLimited)).toHaveLength(1);
    // Another number has its own second (the client sends no Idempotency-Key: there are no replays to answer).
    await limited.client.sendMessage(sendRequest('+15550700001', message, { phoneNumberId: '130000000000002' }));
    await new Promise((resolve) => setTimeout(resolve, 1_050 - (Date.now() - answeredAt)));
    await limited.client.sendMessage(sendRequest('+15550700001', message));
  });
});
