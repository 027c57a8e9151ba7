import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { percent } from '../../lib/chat/builtin-analyst';
import { createOpenAiCompatibleChat } from '../../lib/chat/openai-compatible';
import { MODEL_BOUNDS_DEFAULTS } from '../../lib/openai-client';
import { updateWorkspace } from '../../lib/door/workspace-admin';
import { startTestApi, type RunningApi } from '../support/api';
import { finishStream, sendDelta, startChatModelServer } from '../support/chat-model-server';
import { useTestDatabase } from '../support/database';
import { ndjsonReader } from '../support/ndjson';
import { insertLead } from '../support/calls';
import { unreachableTemporal, uniqueTaskQueue } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
// Chat is an interactive request the API answers itself: no Temporal at all.
const temporal = await unreachableTemporal(uniqueTaskQueue());
const api = await startTestApi({ db, url, temporal });
const owner = await createTestWorkspace(db, {
  settings: { plan: 'ai', features: ['d2c'] },
  scopes: ['intel.view', 'campaigns.view', 'campaigns.delete', 'sales.view'],
});

/** A campaign of calls of known outcomes at known hours (2026-11-23 is a Monday), a few with intelligence, and attributed orders. */
async function scriptedCampaign() {
  const campaign = await db.campaign.create({ data: { workspaceId: owner.workspaceId, name: 'Autumn offer' } });
  const leads = [
    {
      status: 'completed',
      calls: [
        {
          at: '2026-11-23T09:10:00Z',
          outcome: 'answered',
          durationMs: 30_000,
          intelligence: { interest: 'high', budget: null },
        },
      ],
    },
    {
      status: 'completed',
      calls: [
        { at: '2026-11-23T09:40:00Z', outcome: 'no_answer' },
        {
          at: '2026-11-24T14:05:00Z',
          outcome: 'answered',
          durationMs: 50_000,
          intelligence: { interest: 'high', budget: 1200 },
        },
      ],
    },
    { status: 'failed', calls: [{ at: '2026-11-24T14:30:00Z', outcome: 'voicemail' }] },
    { status: 'failed', calls: [{ at: '2026-11-24T14:50:00Z', outcome: 'busy' }] },
    { status: 'queued', calls: [] },
  ] as const;
  for (const [index, lead] of leads.entries()) {
    const leadId = await insertLead(db, owner, campaign.id, { phone: `+1415555012${index}`, status: lead.status });
    for (const [attempt, call] of lead.calls.entries()) {
      const intelligence = 'intelligence' in call ? call.intelligence : undefined;
      await db.call.create({
        data: {
          workspaceId: owner.workspaceId,
          campaignId: campaign.id,
          leadId,
          attempt: attempt + 1,
          attemptId: `${leadId}:${attempt + 1}`,
          provider: 'simulated',
          status: 'ended',
          outcome: call.outcome,
          durationMs: 'durationMs' in call ? call.durationMs : null,
          startedAt: new Date(call.at),
          ...(intelligence && {
            intelligence: {
              extraction: Object.fromEntries(
                Object.entries(intelligence).map(([field, value]) => [
                  field,
                  { value, confidence: value === null ? 0 : 0.9, evidence: '' },
                ]),
              ),
              evaluation: { score: 80, reasons: [] },
              provider: 'rule-based',
              computedAt: call.at,
            },
          }),
        },
      });
    }
  }
  const order = (externalOrderId: string, totalPrice: string, cancelledAt?: Date) => ({
    workspaceId: owner.workspaceId,
    connectionId: randomUUID(),
    externalOrderId,
    orderNumber: `#${externalOrderId}`,
    currency: 'USD',
    totalPrice,
    financialStatus: 'paid',
    fulfillmentStatus: 'unfulfilled',
    customerName: 'Ada',
    placedAt: new Date('2026-11-24T18:00:00Z'),
    cancelledAt: cancelledAt ?? null,
    attributedToService: true,
    attributedCampaignId: campaign.id,
  });
  await db.commerceOrder.createMany({
    data: [order('1', '49.90'), order('2', '10.10'), order('3', '5.00', new Date('2026-11-25T00:00:00Z'))],
  });
  return campaign;
}

async function emptyCampaign(workspaceId = owner.workspaceId) {
  return db.campaign.create({ data: { workspaceId, name: 'Empty' } });
}

/** POST /campaigns/{id}/chat/stream, read line by line as it streams. */
async function ask(
  target: RunningApi,
  campaignId: string,
  message: string,
  options: { key?: string; signal?: AbortSignal } = {},
) {
  const url = `${target.baseUrl}/campaigns/${campaignId}/chat/stream`;
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.key ?? owner.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
    signal: options.signal,
  });
  return { response, events: ndjsonReader(response, 'POST', url) };
}

/** The whole answer: its deltas joined must be the done event's text. */
async function answer(campaignId: string, message: string, target = api) {
  const { response, events } = await ask(target, campaignId, message);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/x-ndjson');
  const all = await events.rest();
  const done = all.at(-1)!;
  expect(done.type).toBe('done');
  const deltas = all.slice(0, -1);
  expect(deltas.every((event) => event.type === 'delta')).toBe(true);
  expect(deltas.map((event) => event.text).join('')).toBe(done.text);
  return { text: done.text!, deltas: deltas.length };
}

const messagesOf = (campaignId: string) =>
  db.campaignChatMessage.findMany({ where: { campaignId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });

describe('the builtin analyst', () => {
  it("gives the KPI endpoint's figures on a scripted campaign, one line per delta, and keeps the conversation", async () => {
    const campaign = await scriptedCampaign();
    const kpis = (await (
      await api.request('GET', `/campaigns/${campaign.id}/kpis`, { key: owner.key })
    ).json()) as Record<string, number>;
    // What the script makes: 5 contacts, 4 dialed, 3 reached (answered or voicemail), 2 answered, 5 calls.
    expect(kpis).toMatchObject({
      contacts: 5,
      dialedContacts: 4,
      reachedContacts: 3,
      pickedUpContacts: 2,
      placed: 5,
      connectRate: 0.75,
      pickupRate: 0.5,
      avgDurationMs: 40_000,
    });

    const rates = await answer(campaign.id, 'What are the connect and pickup rates?');
    expect(rates.deltas).toBeGreaterThan(2);
    expect(rates.text).toContain(
      `Connect rate: ${percent(kpis.connectRate!)} (${kpis.reachedContacts} of ${kpis.dialedContacts} dialed contacts`,
    );
    expect(rates.text).toContain(
      `Pickup rate: ${percent(kpis.pickupRate!)} (${kpis.pickedUpContacts} of ${kpis.dialedContacts} dialed contacts`,
    );
    expect(rates.text).toContain(`Average duration of answered calls: ${kpis.avgDurationMs} ms.`);
    expect(rates.text).toContain(
      `Contacts: ${kpis.contacts}; dialed: ${kpis.dialedContacts}; calls placed: ${kpis.placed}.`,
    );
    expect(rates.text).toContain(
      `Leads: ${kpis.completed} completed, ${kpis.failed} failed or cancelled, ${kpis.pending} pending`,
    );

    const timing = await answer(campaign.id, 'When are the best hours to call?');
    expect(timing.text).toContain('- 09:00-10:00: 2 calls, 1 reached (50.00%), 1 picked up (50.00%).');
    expect(timing.text).toContain('- 14:00-15:00: 3 calls, 2 reached (66.67%), 1 picked up (33.33%).');
    expect(timing.text).toContain('- Monday: 2 calls');
    expect(timing.text).toContain('- Tuesday: 3 calls');
    expect(timing.text).toContain(
      'Best hours to call (highest pickup rate per call): 09:00-10:00 (50.00% of 2 calls), 14:00-15:00 (33.33% of 3 calls).',
    );

    const outcomes = await answer(campaign.id, 'Why did calls fail?');
    expect(outcomes.text).toContain(`Outcomes of the ${kpis.placed} calls placed:`);
    expect(outcomes.text).toContain('- answered: 2 (40.00%).');
    expect(outcomes.text).toContain('by reason: busy 1, no_answer 1, voicemail 1.');

    const intelligence = await answer(campaign.id, 'What does the extracted intelligence say?');
    expect(intelligence.text).toContain('Extracted intelligence of 2 calls, per field:');
    expect(intelligence.text).toContain('- budget: 1200 1, not found 1.');
    expect(intelligence.text).toContain('- interest: "high" 2.');

    const orders = await answer(campaign.id, 'How much revenue did it bring?');
    expect(orders.text).toContain('Orders attributed to this campaign: 3 (1 of them cancelled).');
    expect(orders.text).toContain('Revenue: 60.00 USD from 2 orders not cancelled.');

    // A follow-up naming no topic continues the one before.
    const followUp = await answer(campaign.id, 'And once more?');
    expect(followUp.text).toContain('Revenue: 60.00 USD');

    const stored = await messagesOf(campaign.id);
    expect(stored.map((message) => message.role)).toEqual(
      Array.from({ length: 6 }, () => ['user', 'assistant']).flat(),
    );
    expect(stored[0]).toMatchObject({
      content: 'What are the connect and pickup rates?',
      apiKeyId: owner.keyId,
      provider: null,
    });
    expect(stored[1]).toMatchObject({ content: rates.text, provider: 'builtin-analyst' });
  });

  it('says plainly what it cannot answer and invents no figure', async () => {
    const campaign = await emptyCampaign();
    const unknown = await answer(campaign.id, 'What is the weather like in Paris?');
    expect(unknown.text).toMatch(/^I can't answer that from this campaign's data\. I can tell you about: /);
    expect(unknown.text).not.toMatch(/\d/);
    const forecast = await answer(campaign.id, 'Will the pickup rate improve next week?');
    expect(forecast.text).toContain('I cannot predict future results');
    expect(forecast.text).toContain('No contact has been dialed yet, so there is no connect or pickup rate.');
    const hours = await answer(campaign.id, 'What are the best hours?');
    expect(hours.text).toContain('No calls have been placed yet');

    const withoutSales = await createTestWorkspace(db, {
      settings: { plan: 'ai', features: ['d2c'] },
      scopes: ['intel.view'],
    });
    const theirs = await emptyCampaign(withoutSales.workspaceId);
    const { events } = await ask(api, theirs.id, 'Any orders?', { key: withoutSales.key });
    expect((await events.rest()).at(-1)!.text).toContain(
      "I can't tell you about orders: attributed orders and revenue need the sales.view scope",
    );
  });
});

describe('the message', () => {
  it('is 1 to 4000 characters: 0 and 4001 are 400 invalid_body and nothing is stored', async () => {
    const campaign = await emptyCampaign();
    for (const message of ['', 'x'.repeat(4001)]) {
      const refused = await api.request('POST', `/campaigns/${campaign.id}/chat/stream`, {
        key: owner.key,
        body: { message },
      });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toBe('invalid_body');
    }
    expect(await messagesOf(campaign.id)).toEqual([]);
    await answer(campaign.id, 'x'.repeat(4000));
    expect((await messagesOf(campaign.id)).map((message) => message.content.length)).toEqual([
      4000,
      expect.any(Number),
    ]);
  });
});

describe('the fair-use cap', () => {
  it('refuses the question over the workspace cap with 429 message_limit_reached, and clearing the conversation gives no question back', async () => {
    const capped = await createTestWorkspace(db, {
      settings: { plan: 'ai' },
      scopes: ['intel.view', 'campaigns.delete'],
    });
    await updateWorkspace(db, capped.workspaceId, { chatMessageCap: 2 });
    const campaign = await emptyCampaign(capped.workspaceId);
    const path = `/campaigns/${campaign.id}/chat/stream`;
    for (const message of ['How is it going?', 'And now?'])
      expect((await api.request('POST', path, { key: capped.key, body: { message } })).status).toBe(200);
    const over = await api.request('POST', path, { key: capped.key, body: { message: 'Once more?' } });
    expect(over.status).toBe(429);
    expect(over.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await over.json()) as { error: string }).error).toBe('message_limit_reached');
    expect((await messagesOf(campaign.id)).map((message) => message.content)).not.toContain('Once more?');
    expect(await messagesOf(campaign.id)).toHaveLength(4);

    const cleared = await api.request('DELETE', `/campaigns/${campaign.id}/chat/messages`, { key: capped.key });
    expect(cleared.status).toBe(200);
    expect(await cleared.json()).toEqual({ deleted: 4 });
    expect(await messagesOf(campaign.id)).toEqual([]);
    // The cap counts what was asked: the cleared conversation still refuses the third question, and stores nothing.
    const afterClear = await api.request('POST', path, { key: capped.key, body: { message: 'Once more?' } });
    expect(afterClear.status).toBe(429);
    expect(((await afterClear.json()) as { error: string }).error).toBe('message_limit_reached');
    expect(await messagesOf(campaign.id)).toEqual([]);
    // The operator raising the workspace's cap is what lets it ask again.
    await updateWorkspace(db, capped.workspaceId, { chatMessageCap: 3 });
    expect((await api.request('POST', path, { key: capped.key, body: { message: 'Once more?' } })).status).toBe(200);
  });
});

describe('the door', () => {
  it('needs the ai plan, intel.view, campaigns.delete to clear, and a campaign of the workspace', async () => {
    const basic = await createTestWorkspace(db, {
      settings: { plan: 'basic' },
      scopes: ['intel.view', 'campaigns.delete'],
    });
    const basicCampaign = await emptyCampaign(basic.workspaceId);
    const body = { message: 'How is it going?' };
    const belowAi = await api.request('POST', `/campaigns/${basicCampaign.id}/chat/stream`, { key: basic.key, body });
    expect(belowAi.status).toBe(403);
    expect(await belowAi.json()).toEqual({ error: 'plan_required', requiredPlan: 'ai' });
    // Clearing needs only a plan with business intelligence (basic).
    expect(
      (await api.request('DELETE', `/campaigns/${basicCampaign.id}/chat/messages`, { key: basic.key })).status,
    ).toBe(200);

    const campaign = await emptyCampaign();
    const viewOnly = await createTestWorkspace(db, {
      settings: { plan: 'ai' },
      scopes: ['campaigns.view', 'intel.view'],
    });
    const noIntel = await createTestWorkspace(db, { settings: { plan: 'ai' }, scopes: ['campaigns.delete'] });
    const refusedAsk = await api.request('POST', `/campaigns/${campaign.id}/chat/stream`, { key: noIntel.key, body });
    expect(await refusedAsk.json()).toEqual({ error: 'forbidden', requiredPermission: 'intel.view' });
    const refusedClear = await api.request('DELETE', `/campaigns/${campaign.id}/chat/messages`, { key: viewOnly.key });
    expect(refusedClear.status).toBe(403);
    expect(await refusedClear.json()).toEqual({ error: 'forbidden', requiredPermission: 'campaigns.delete' });

    // Another workspace's campaign: 403 forbidden, as on every campaign route, and nothing stored.
    const other = await createTestWorkspace(db, {
      settings: { plan: 'ai' },
      scopes: ['intel.view', 'campaigns.delete'],
    });
    for (const [method, path, requestBody] of [
      ['POST', `/campaigns/${campaign.id}/chat/stream`, body],
      ['DELETE', `/campaigns/${campaign.id}/chat/messages`, undefined],
    ] as const) {
      const refused = await api.request(method, path, { key: other.key, body: requestBody });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({ error: 'forbidden' });
    }
    expect(await messagesOf(campaign.id)).toEqual([]);
  });
});

// A local OpenAI-compatible endpoint, and an API whose chat provider is the adapter pointed at it.
let release = () => {};
let finished = false;
const model = await startChatModelServer(async (request, res) => {
  const last = request.body.messages.at(-1)!.content;
  if (last === 'fail') return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
  sendDelta(res, 'The pickup ');
  if (last === 'hang') return request.closed;
  await new Promise<void>((resolve) => (release = resolve));
  sendDelta(res, 'rate is 50.00%.');
  finished = true;
  finishStream(res);
});
const modelApi = await startTestApi({
  db,
  url,
  temporal,
  chat: createOpenAiCompatibleChat({
    baseUrl: model.baseUrl,
    model: 'test-model',
    apiKey: 'sk-test-model-key',
    timeoutMs: 30_000,
  }),
});

describe('the OpenAI-compatible adapter', () => {
  it('streams the first delta before the model has finished, and grounds the model in the facts and the conversation', async () => {
    const campaign = await scriptedCampaign();
    finished = false;
    const first = await ask(modelApi, campaign.id, 'How are pickups?');
    expect(first.response.status).toBe(200);
    expect(await first.events.next()).toEqual({ type: 'delta', text: 'The pickup ' });
    // The model is holding its stream open: the client already has the first delta.
    expect(finished).toBe(false);
    release();
    expect(await first.events.rest()).toEqual([
      { type: 'delta', text: 'rate is 50.00%.' },
      { type: 'done', text: 'The pickup rate is 50.00%.' },
    ]);

    const second = await ask(modelApi, campaign.id, 'And connects?');
    expect(await second.events.next()).toEqual({ type: 'delta', text: 'The pickup ' });
    release();
    await second.events.rest();

    const request = model.requests.at(-1)!;
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.authorization).toBe('Bearer sk-test-model-key');
    // Every answer bounded (MODEL_MAX_TOKENS_CHAT's default here).
    expect(request.body).toMatchObject({
      model: 'test-model',
      stream: true,
      max_tokens: MODEL_BOUNDS_DEFAULTS.chatMaxTokens,
    });
    const [system, ...conversation] = request.body.messages;
    expect(system!.role).toBe('system');
    const facts = JSON.parse(system!.content.slice(system!.content.indexOf('{'))) as Record<
      string,
      Record<string, unknown>
    >;
    const kpis = (await (
      await api.request('GET', `/campaigns/${campaign.id}/kpis`, { key: owner.key })
    ).json()) as Record<string, unknown>;
    expect(facts.kpis).toEqual(kpis);
    expect(facts.orders).toMatchObject({
      orders: 3,
      cancelled: 1,
      revenue: [{ currency: 'USD', orders: 2, total: '60.00' }],
    });
    expect(conversation).toEqual([
      { role: 'user', content: 'How are pickups?' },
      { role: 'assistant', content: 'The pickup rate is 50.00%.' },
      { role: 'user', content: 'And connects?' },
    ]);
  });

  it('stops the model when the client disconnects: the question is kept, the partial answer is not', async () => {
    const campaign = await emptyCampaign();
    const client = new AbortController();
    const { events } = await ask(modelApi, campaign.id, 'hang', { signal: client.signal });
    expect(await events.next()).toEqual({ type: 'delta', text: 'The pickup ' });
    const request = model.requests.at(-1)!;
    client.abort();
    // The local model server sees its connection closed: the API stopped asking the model.
    await request.closed;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await messagesOf(campaign.id)).map((message) => [message.role, message.content])).toEqual([
      ['user', 'hang'],
    ]);
  });

  it('keeps no answer for a conversation cleared while the answer streamed', async () => {
    const campaign = await emptyCampaign();
    const { events } = await ask(modelApi, campaign.id, 'How are pickups?');
    expect(await events.next()).toEqual({ type: 'delta', text: 'The pickup ' });
    const cleared = await api.request('DELETE', `/campaigns/${campaign.id}/chat/messages`, { key: owner.key });
    expect(await cleared.json()).toEqual({ deleted: 1 });
    release();
    expect((await events.rest()).at(-1)).toEqual({ type: 'done', text: 'The pickup rate is 50.00%.' });
    expect(await messagesOf(campaign.id)).toEqual([]);
  });

  it('ends with an error line when the model fails after the answer began, and keeps no answer', async () => {
    const campaign = await emptyCampaign();
    const { response, events } = await ask(modelApi, campaign.id, 'fail');
    expect(response.status).toBe(200);
    expect(await events.rest()).toEqual([{ type: 'error', message: 'the chat model answered HTTP 500' }]);
    await until(
      () => messagesOf(campaign.id),
      (messages) => messages.length === 1,
    );
    expect((await messagesOf(campaign.id))[0]).toMatchObject({ role: 'user', content: 'fail' });
  });
});
