import { describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { HOLD_SETTLERS, HOLD_SWEEP_ACTOR } from '../../lib/credits/abandoned-holds';
import { prismaCreditStore, type LedgerEntry } from '../../lib/credits/ledger-store';
import { testSessionHoldKey } from '../../lib/credits/test-session-billing';
import { grantCredits } from '../../lib/door/workspace-admin';
import { sweepTestSessions } from '../../api/test-sessions/session-billing';
import { TEST_SESSION_PROTOCOL } from '../../api/test-sessions/session-socket';
import { MAX_OPEN_TEST_SESSIONS } from '../../api/test-sessions/test-sessions';
import { SOCKET_FRAME_LIMITS } from '../../lib/carriers/twilio/conversation-relay/turn-queue';
import { TWIN_REPLIES } from '../../simulators/openai-twin/model';
import { insertAgent } from '../support/agents';
import { functionDefinitionSchema } from '../../lib/functions/function-definition';
import { bindFunction, createFunction } from '../../lib/functions/functions';
import { startReceiver } from '../support/http-receiver';
import { TEST_KEYRING } from '../support/keyring';
import { startTestApi, type RunningApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { startOpenAiTwin, twinDialogue } from '../support/openai-twin';
import { unreachableTemporal, uniqueTaskQueue } from '../support/temporal';
import { connectTestSession } from '../support/test-sessions';
import { until } from '../support/until';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await unreachableTemporal(uniqueTaskQueue());
// No sweep in the background: the tests sweep when they mean to.
const api = await startTestApi({ db, url, temporal, testSessions: { sweepEveryMs: 0 } });

// An API whose sessions idle out, or end, within a moment: the ends are awaited as frames, never timed.
const quick = await startTestApi({ db, url, temporal, testSessions: { sweepEveryMs: 0, idleMs: 300 } });
const short = await startTestApi({
  db,
  url,
  temporal,
  testSessions: { sweepEveryMs: 0, idleMs: 60_000, maxLengthMs: 300 },
});

// An API whose billed minute lasts 300 ms: a session's hold covers its minutes within a test.
const paced = await startTestApi({
  db,
  url,
  temporal,
  testSessions: { sweepEveryMs: 0, idleMs: 60_000, minuteMs: 300 },
});

// An API whose agents with instructions talk through a model: the OpenAI twin.
const model = await startOpenAiTwin();
const modelled = await startTestApi({
  db,
  url,
  temporal,
  testSessions: { sweepEveryMs: 0 },
  dialogue: twinDialogue(model.baseURL),
});

const QUESTIONS = ['What colour do you like?', 'How many pairs?'];

interface Workspace extends TestWorkspace {
  agentId: string;
}

async function workspaceWith(options: { credits?: number; transferNumber?: string | null; scopes?: string[] } = {}) {
  const workspace = await createTestWorkspace(db, { scopes: options.scopes ?? ['calls.test', 'billing.view'] });
  if ((options.credits ?? 1) > 0) await grantCredits(db, workspace.workspaceId, options.credits ?? 1);
  const agent = await insertAgent(db, workspace.workspaceId, {
    script: { openingLine: 'Hello {{name}}, this is the shoe shop.', questions: QUESTIONS, closing: 'Goodbye.' },
    transferNumber: options.transferNumber ?? null,
  });
  return { ...workspace, agentId: agent.id };
}

interface Created {
  id: string;
  url: string;
  token: string;
  expiresAt: string;
}

async function createSession(workspace: Workspace, lead: Record<string, unknown> = {}, via: RunningApi = api) {
  const response = await via.request('POST', '/v1/test-sessions', {
    key: workspace.key,
    body: { agentId: workspace.agentId, lead: { name: 'Ana', phone: '+14155550100', ...lead } },
  });
  expect(response.status).toBe(201);
  return (await response.json()) as Created;
}

const connect = (created: Pick<Created, 'url'>, token: string) => connectTestSession(created.url, token);

/** A handshake that must be refused: its status and body. */
function refusedHandshake(sessionUrl: string, protocols: string[]): Promise<{ status: number; body: unknown }> {
  const ws = new WebSocket(sessionUrl, protocols);
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the handshake was accepted')));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
  });
}

async function sessionOf(workspace: Workspace, id: string) {
  const response = await api.request('GET', `/v1/test-sessions/${id}`, { key: workspace.key });
  expect(response.status).toBe(200);
  return (await response.json()) as {
    status: string;
    endReason: string | null;
    outcome: string | null;
    durationMs: number | null;
    connectedAt: string | null;
    transcript: Array<{ speaker: string; text: string; tool?: { name: string; ok: boolean; result: string } }>;
  };
}

/** The session's ledger entries: [kind, status, amount], hold first. */
async function entriesOf(workspace: Workspace, sessionId: string) {
  const entries = await db.creditLedgerEntry.findMany({
    where: { workspaceId: workspace.workspaceId, referenceId: sessionId },
    orderBy: [{ createdAt: 'asc' }, { kind: 'asc' }],
  });
  const order = ['hold', 'hold_release', 'test_call'];
  return entries
    .sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind))
    .map((entry) => [entry.kind, entry.status, entry.amount.toFixed(4)]);
}

/** What the worker's sweep of abandoned holds does with the session's hold (lib/credits/abandoned-holds.ts). */
async function workerSweepSettles(sessionId: string) {
  const hold = await db.creditLedgerEntry.findFirstOrThrow({ where: { referenceId: sessionId, kind: 'hold' } });
  const entry = { workspaceId: hold.workspaceId, referenceId: sessionId, idempotencyKey: hold.idempotencyKey };
  return HOLD_SETTLERS.test_session!(prismaCreditStore(db), entry as LedgerEntry, HOLD_SWEEP_ACTOR);
}

const endedInDatabase = (id: string) =>
  until(
    () => db.testSession.findUniqueOrThrow({ where: { id } }),
    (session) => session.endedAt !== null,
  );

describe('web test sessions: the conversation', () => {
  it('streams the agent by tokens over the socket, stores the turns, and the closing ends it, billed once', async () => {
    const workspace = await workspaceWith({ credits: 1 });
    const created = await createSession(workspace);
    expect(created.url).toBe(`${api.baseUrl.replace('http', 'ws')}/v1/test-sessions/${created.id}/socket`);
    expect(created.token).not.toContain(created.id);
    const stored = await db.testSession.findUniqueOrThrow({ where: { id: created.id } });
    expect(stored.tokenHash).not.toBe(created.token); // only its hash is stored
    expect(JSON.stringify(stored)).not.toContain(created.token);

    const client = await connect(created, created.token);
    const opening = await client.turn();
    expect(opening.words).toBe('Hello Ana, this is the shoe shop. What colour do you like?');
    client.send({ type: 'message', text: 'Red.' });
    const second = await client.turn();
    expect(second.words).toBe('How many pairs?');
    client.send({ type: 'message', text: 'Two.' });
    expect((await client.turn()).words).toBe('Goodbye.');
    expect(await client.next()).toEqual({ type: 'ended', reason: 'agent_ended', outcome: 'completed' });
    expect(await client.closed).toBe(1000);

    const session = await sessionOf(workspace, created.id);
    expect(session).toMatchObject({ status: 'ended', endReason: 'agent_ended', outcome: 'completed' });
    expect(session.durationMs).toBeGreaterThan(0);
    expect(session.transcript.map((turn) => [turn.speaker, turn.text])).toEqual([
      ['agent', 'Hello Ana, this is the shoe shop.'],
      ['agent', 'What colour do you like?'],
      ['lead', 'Red.'],
      ['agent', 'How many pairs?'],
      ['lead', 'Two.'],
      ['agent', 'Goodbye.'],
    ]);
    // Held 10 minutes (the balance's whole), charged one started minute at the test call's price.
    expect(await entriesOf(workspace, created.id)).toEqual([
      ['hold', 'posted', '-1.0000'],
      ['hold_release', 'posted', '1.0000'],
      ['test_call', 'posted', '-0.1000'],
    ]);
    const hold = await db.creditLedgerEntry.findFirstOrThrow({ where: { referenceId: created.id, kind: 'hold' } });
    expect(hold).toMatchObject({
      referenceType: 'test_session',
      actor: 'api_key',
      actorId: workspace.keyId,
      idempotencyKey: testSessionHoldKey(created.id),
    });
  });

  it("stores the turns redacted by the workspace's compliance rules", async () => {
    const workspace = await workspaceWith();
    await db.complianceSettings.create({ data: { workspaceId: workspace.workspaceId, redactions: ['email_address'] } });
    const created = await createSession(workspace);
    const client = await connect(created, created.token);
    await client.turn();
    client.send({ type: 'message', text: 'Write to ana@example.com please.' });
    await client.turn();
    client.send({ type: 'end' });
    expect(await client.next()).toMatchObject({ type: 'ended', reason: 'client_ended', outcome: 'incomplete' });
    const leadTurns = (await sessionOf(workspace, created.id)).transcript.filter((turn) => turn.speaker === 'lead');
    expect(leadTurns).toHaveLength(1);
    expect(leadTurns[0]!.text).not.toContain('ana@example.com');
  });

  it('answers bad frames with an error frame and goes on', async () => {
    const workspace = await workspaceWith();
    const created = await createSession(workspace);
    const client = await connect(created, created.token);
    await client.turn();
    for (const bad of ['not json', { type: 'message' }, { type: 'shout', text: 'x' }, { type: 'message', text: '' }]) {
      client.send(bad);
      expect(await client.next()).toMatchObject({ type: 'error', error: 'invalid_body' });
    }
    client.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(await client.next()).toMatchObject({ type: 'error', error: 'invalid_body' });
    client.send({ type: 'message', text: 'Bad \u0000 byte' });
    expect(await client.next()).toMatchObject({ type: 'error', error: 'invalid_body' });
    // Still open, still the first question's answer awaited.
    client.send({ type: 'message', text: 'Blue.' });
    expect((await client.turn()).words).toBe('How many pairs?');
    client.send({ type: 'end' });
    expect(await client.next()).toMatchObject({ type: 'ended', reason: 'client_ended' });
    expect((await sessionOf(workspace, created.id)).transcript.filter((turn) => turn.speaker === 'lead')).toEqual([
      { speaker: 'lead', text: 'Blue.', offsetMs: expect.any(Number) },
    ]);
  });
});

describe('web test sessions with a model: the knowledge search', () => {
  const SHIPPING = 'We ship to the United States, Canada and Mexico within two business days.';

  /** A workspace whose agent has instructions (the model engine) and these knowledge documents. */
  async function modelledWorkspace(documents: Array<{ title: string; content: string }>): Promise<Workspace> {
    const workspace = await workspaceWith();
    const agent = await insertAgent(db, workspace.workspaceId, { instructions: 'You sell shoes.' });
    const base = await db.knowledgeBase.create({ data: { workspaceId: workspace.workspaceId, name: 'Shop' } });
    for (const document of documents) {
      const row = await db.knowledgeDocument.create({
        data: {
          workspaceId: workspace.workspaceId,
          knowledgeBaseId: base.id,
          format: 'text',
          charCount: document.content.length,
          ...document,
        },
      });
      await db.agentDocument.create({ data: { agentId: agent.id, documentId: row.id } });
    }
    return { ...workspace, agentId: agent.id };
  }

  /** The lead's messages, each answered; the agent's words, and the knowledge statements the API ran meanwhile. */
  async function talk(workspace: Workspace, messages: string[]) {
    const query = vi.spyOn(modelled.services.sql, 'query');
    try {
      const created = await createSession(workspace, {}, modelled);
      const client = await connect(created, created.token);
      expect((await client.turn()).words).toContain(TWIN_REPLIES.opening);
      const answers: string[] = [];
      for (const text of messages) {
        client.send({ type: 'message', text });
        answers.push((await client.turn()).words);
      }
      client.send({ type: 'end' });
      expect(await client.next()).toMatchObject({ type: 'ended', reason: 'client_ended' });
      // A named statement (pg's QueryConfig) has its name; a text none.
      const names = query.mock.calls.map(([statement]) => (statement as unknown as { name?: string }).name ?? '');
      return {
        answers,
        searches: names.filter((name) => name.startsWith('knowledge_search_')).length,
        questions: names.filter((name) => name === 'knowledge_agent_has_passages').length,
      };
    } finally {
      query.mockRestore();
    }
  }

  const QUESTIONS_ASKED = ['Do you ship to Canada?', 'How fast do you ship?', 'Is shipping to Mexico possible?'];

  it('an agent without documents: one question for the whole session, and no search of what the lead says', async () => {
    const { answers, searches, questions } = await talk(await modelledWorkspace([]), QUESTIONS_ASKED);
    expect(answers).toEqual(QUESTIONS_ASKED.map(() => TWIN_REPLIES.acknowledgement));
    expect(searches).toBe(0);
    expect(questions).toBe(1);
  });

  it("an agent with documents: each of the lead's messages searched, the passage reaching the model", async () => {
    const workspace = await modelledWorkspace([{ title: 'Shipping', content: SHIPPING }]);
    const { answers, searches, questions } = await talk(workspace, QUESTIONS_ASKED);
    expect(answers).toEqual(QUESTIONS_ASKED.map(() => TWIN_REPLIES.knowledge(SHIPPING)));
    expect(searches).toBe(QUESTIONS_ASKED.length);
    expect(questions).toBe(1);
  });
});

describe('web test sessions: one turn at a time', () => {
  it('keeps messages sent while the agent answers as one utterance, answered once; the activity is not one UPDATE per frame', async () => {
    const workspace = await workspaceWith();
    const agent = await insertAgent(db, workspace.workspaceId, { instructions: 'You sell shoes.' });
    const query = vi.spyOn(modelled.services.sql, 'query');
    try {
      const created = await createSession({ ...workspace, agentId: agent.id }, {}, modelled);
      const client = await connect(created, created.token);
      expect((await client.turn()).words).toContain(TWIN_REPLIES.opening);
      const requestsBefore = model.twin.requests.length;
      // The next answer is held by the twin after two words: a turn is running.
      model.twin.script({ content: 'one two three four', holdAfterWords: 2 });
      client.send({ type: 'message', text: 'First.' });
      await until(
        () => Promise.resolve(model.twin.held),
        (held) => held === 1,
      );
      const flood = Array.from({ length: 20 }, (_, i) => `m${i + 1}`);
      for (const text of flood) client.send({ type: 'message', text });
      // An error frame is answered at once, in order: every message before it has been read (and is waiting).
      client.send('not json');
      let heard = await client.next();
      while (heard.type === 'token') heard = await client.next();
      expect(heard).toMatchObject({ type: 'error', error: 'invalid_body' });
      expect(model.twin.release()).toBe(1);
      await client.turn();
      // The twenty waited as one utterance: one more request, one answer.
      expect((await client.turn()).words).toBe(TWIN_REPLIES.acknowledgement);
      client.send({ type: 'end' });
      expect(await client.next()).toMatchObject({ type: 'ended', reason: 'client_ended' });
      expect(model.twin.requests.length - requestsBefore).toBe(2);
      const sent = model.twin.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
      expect(sent.at(-1)).toEqual({ role: 'user', content: flood.join(' ') });
      const lead = (await sessionOf(workspace, created.id)).transcript.filter((turn) => turn.speaker === 'lead');
      expect(lead.map((turn) => turn.text)).toEqual(['First.', flood.join(' ')]);
      // 23 frames within seconds: the session's activity written once, not once a frame.
      const names = query.mock.calls.map(([statement]) => (statement as unknown as { name?: string }).name ?? '');
      expect(names.filter((name) => name === 'test_session_touch')).toHaveLength(1);
    } finally {
      query.mockRestore();
    }
  });

  it("drops frames past the socket's rate with a rate_limited error frame, and closes a client that keeps on", async () => {
    const workspace = await workspaceWith();
    const created = await createSession(workspace);
    const client = await connect(created, created.token);
    await client.turn();
    for (let i = 0; i < SOCKET_FRAME_LIMITS.burst + 20; i += 1) client.send('not json');
    const errors: string[] = [];
    for (let i = 0; i < SOCKET_FRAME_LIMITS.burst + 20; i += 1) {
      const frame = await client.next();
      if (frame.type === 'error') errors.push(frame.error);
    }
    // The burst is read (each answered invalid_body); what comes faster than the rate is dropped and said so.
    expect(errors.filter((error) => error === 'invalid_body').length).toBeGreaterThanOrEqual(SOCKET_FRAME_LIMITS.burst);
    expect(errors.filter((error) => error === 'rate_limited').length).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < SOCKET_FRAME_LIMITS.droppedBeforeClose; i += 1) client.send('not json');
    expect(await client.closed).toBe(1000);
    expect(await sessionOf(workspace, created.id)).toMatchObject({ status: 'ended', endReason: 'client_ended' });
  });
});

describe('web test sessions: their limits', () => {
  it('ends a silent session idle_timeout, billed', async () => {
    const workspace = await workspaceWith();
    const created = await createSession(workspace, {}, quick);
    const client = await connect(created, created.token);
    await client.turn();
    expect(await client.next()).toEqual({ type: 'ended', reason: 'idle_timeout', outcome: 'incomplete' });
    expect(await client.closed).toBe(1000);
    expect((await entriesOf(workspace, created.id)).map(([kind]) => kind)).toEqual([
      'hold',
      'hold_release',
      'test_call',
    ]);
  });

  it('refuses one session more than a workspace may have open with 429 rate_limited, nothing recorded; an ended one frees its place', async () => {
    const workspace = await workspaceWith({ credits: 10 });
    const open = [];
    for (let i = 0; i < MAX_OPEN_TEST_SESSIONS; i += 1) open.push(await createSession(workspace));
    const over = await api.request('POST', '/v1/test-sessions', {
      key: workspace.key,
      body: { agentId: workspace.agentId },
    });
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('60');
    expect(await over.json()).toMatchObject({
      error: 'rate_limited',
      detail: expect.stringContaining('5 test sessions'),
    });
    expect(await db.testSession.count({ where: { workspaceId: workspace.workspaceId } })).toBe(MAX_OPEN_TEST_SESSIONS);
    const client = await connect(open[0]!, open[0]!.token);
    await client.turn();
    client.send({ type: 'end' });
    expect(await client.next()).toMatchObject({ type: 'ended', reason: 'client_ended' });
    await createSession(workspace);
  });

  it('ends a session with a closing line when the minutes its hold covers run out, charging no more than it held', async () => {
    // 0.2 credits: a hold of two minutes (0.1 each), on an API whose billed minute is 300 ms: 600 ms of talk.
    const workspace = await workspaceWith({ credits: 0.2 });
    const created = await createSession(workspace, {}, paced);
    const client = await connect(created, created.token);
    await client.turn();
    expect((await client.turn()).words).toBe("I'm sorry, the time for this test is up. Goodbye.");
    expect(await client.next()).toEqual({ type: 'ended', reason: 'max_length', outcome: 'incomplete' });
    expect((await sessionOf(workspace, created.id)).endReason).toBe('max_length');
    expect(await entriesOf(workspace, created.id)).toEqual([
      ['hold', 'posted', '-0.2000'],
      ['hold_release', 'posted', '0.2000'],
      ['test_call', 'posted', '-0.1000'],
    ]);
    // A hold covering the whole maximum length: not cut at the paced minutes (the first turn, then a reply).
    const rich = await workspaceWith({ credits: 10 });
    const long = await createSession(rich, {}, paced);
    const talker = await connect(long, long.token);
    await talker.turn();
    talker.send({ type: 'message', text: 'Blue.' });
    expect((await talker.turn()).words).toBe('How many pairs?');
    talker.send({ type: 'end' });
    expect(await talker.next()).toMatchObject({ type: 'ended', reason: 'client_ended' });
  });

  it('ends a session at its maximum length, billed', async () => {
    const workspace = await workspaceWith();
    const created = await createSession(workspace, {}, short);
    const client = await connect(created, created.token);
    await client.turn();
    expect(await client.next()).toEqual({ type: 'ended', reason: 'max_length', outcome: 'incomplete' });
    expect((await sessionOf(workspace, created.id)).endReason).toBe('max_length');
    expect((await entriesOf(workspace, created.id)).map(([kind]) => kind)).toEqual([
      'hold',
      'hold_release',
      'test_call',
    ]);
  });
});

describe('web test sessions: tools act on nothing real', () => {
  it('opt_out lists no number', async () => {
    const workspace = await workspaceWith();
    const created = await createSession(workspace);
    const client = await connect(created, created.token);
    await client.turn();
    client.send({ type: 'message', text: 'Please stop calling me.' });
    const { frames, words } = await client.turn();
    expect(frames).toEqual([
      {
        type: 'tool',
        name: 'opt_out',
        arguments: {},
        ok: true,
        result: 'A test session: +14155550100 would be put on the do-not-call list; no number was listed.',
      },
    ]);
    expect(words).toContain("We won't call you again.");
    expect(await client.next()).toEqual({ type: 'ended', reason: 'agent_ended', outcome: 'opted_out' });
    expect(await db.doNotCall.count({ where: { workspaceId: workspace.workspaceId } })).toBe(0);
    const tool = (await sessionOf(workspace, created.id)).transcript.find((turn) => turn.speaker === 'tool');
    expect(tool).toMatchObject({ text: 'opt_out', tool: { name: 'opt_out', ok: true } });
  });

  it("offers the agent's custom function and calls it at its question as a call does, sending nothing", async () => {
    const workspace = await workspaceWith();
    const endpoint = await startReceiver(() => 200);
    const { id } = await createFunction(
      db,
      TEST_KEYRING,
      workspace.workspaceId,
      functionDefinitionSchema.parse({
        name: 'hold_stock',
        description: 'Holds the colour the lead wants.',
        url: endpoint.url,
        fillerLine: 'Let me check.',
      }),
    );
    await bindFunction(db, workspace.workspaceId, id, workspace.agentId, 1);
    const created = await createSession(workspace);
    const client = await connect(created, created.token);
    await client.turn();
    client.send({ type: 'message', text: 'Navy.' });
    const { frames, words } = await client.turn();
    const result = 'A test session: hold_stock would be called with {"answer":"Navy."}; no request was sent.';
    expect(frames).toEqual([{ type: 'tool', name: 'hold_stock', arguments: { answer: 'Navy.' }, ok: true, result }]);
    expect(words).toContain('Let me check.');
    expect(words).toContain(QUESTIONS[1]);
    expect(endpoint.received).toEqual([]);
    client.ws.close();
    await client.closed;
  });

  it("schedule_callback reads the time in the lead phone's zone and books no attempt", async () => {
    const workspace = await workspaceWith();
    const created = await createSession(workspace); // +1 415: America/Los_Angeles
    const client = await connect(created, created.token);
    await client.turn();
    // A Wednesday: inside the default calling window (Monday to Saturday, 9:00 to 20:00) whatever today is, where
    // "tomorrow" is a Sunday once a week and the callback then moves to Monday morning.
    client.send({ type: 'message', text: 'Call me back on Wednesday at 3 pm.' });
    const { frames, words } = await client.turn();
    expect(frames).toHaveLength(1);
    expect(frames[0]).toMatchObject({ type: 'tool', name: 'schedule_callback', ok: true });
    const result = (frames[0] as { result: string }).result;
    expect(result).toMatch(/^Callback booked for Wednesday, .*3:00\s?PM \(America\/Los_Angeles\)\./);
    expect(result).toContain('A test session: no attempt was booked.');
    expect(words).toMatch(/We'll call you back on .*3:00\s?PM/);
    expect(await client.next()).toEqual({ type: 'ended', reason: 'agent_ended', outcome: 'callback_requested' });
    expect(await db.call.count({ where: { workspaceId: workspace.workspaceId } })).toBe(0);
    expect(await db.lead.count({ where: { workspaceId: workspace.workspaceId } })).toBe(0);
  });

  it("transfer_to_human says it would dial the agent's transfer number, and dials nothing", async () => {
    const workspace = await workspaceWith({ transferNumber: '+14155550199' });
    const created = await createSession(workspace);
    const client = await connect(created, created.token);
    await client.turn();
    client.send({ type: 'message', text: 'Can I talk to a real person?' });
    const { frames } = await client.turn();
    expect(frames).toEqual([
      expect.objectContaining({
        type: 'tool',
        name: 'transfer_to_human',
        ok: true,
        result: 'A test session: the call would be transferred to +14155550199 after your words; nothing was dialed.',
      }),
    ]);
    expect(await client.next()).toEqual({ type: 'ended', reason: 'agent_ended', outcome: 'transferred' });
    expect(await db.call.count({ where: { workspaceId: workspace.workspaceId } })).toBe(0);
  });

  it('transfer_to_human without a transfer number says there is none, and the session goes on', async () => {
    const workspace = await workspaceWith({ transferNumber: null });
    const created = await createSession(workspace);
    const client = await connect(created, created.token);
    await client.turn();
    client.send({ type: 'message', text: 'Can I talk to a real person?' });
    const { frames, words } = await client.turn();
    expect(frames).toEqual([
      expect.objectContaining({
        type: 'tool',
        name: 'transfer_to_human',
        ok: false,
        result: expect.stringMatching(/^No human/),
      }),
    ]);
    expect(words).toContain('Would you like us to call you back later?');
    client.send({ type: 'end' });
    expect(await client.next()).toEqual({ type: 'ended', reason: 'client_ended', outcome: 'incomplete' });
  });
});

describe('web test sessions: who may open one', () => {
  it('refuses a wrong, a reused and an expired token, and another session’s, with nothing changed', async () => {
    const workspace = await workspaceWith({ credits: 3 }); // each hold reserves the longest session: 1.5
    const created = await createSession(workspace);
    const other = await createSession(workspace);
    const refused = (protocols: string[], session = created) => refusedHandshake(session.url, protocols);
    const unauthorized = { status: 401, body: expect.objectContaining({ error: 'unauthorized' }) };
    expect(await refused([TEST_SESSION_PROTOCOL, 'wrong-token'])).toEqual(unauthorized);
    expect(await refused([TEST_SESSION_PROTOCOL])).toEqual(unauthorized);
    expect(await refused([TEST_SESSION_PROTOCOL, other.token])).toEqual(unauthorized);
    expect(
      await refusedHandshake(created.url.replace(created.id, 'not-a-uuid'), [TEST_SESSION_PROTOCOL, created.token]),
    ).toEqual(unauthorized);
    // None of those spent the token or changed the session.
    expect(await db.testSession.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({
      connectedAt: null,
      endedAt: null,
    });
    const client = await connect(created, created.token);
    await client.turn();
    expect(await refused([TEST_SESSION_PROTOCOL, created.token])).toEqual(unauthorized); // reused
    client.send({ type: 'end' });
    await client.closed;

    // Expired: the token's time is over.
    await db.testSession.update({ where: { id: other.id }, data: { tokenExpiresAt: new Date(Date.now() - 1000) } });
    expect(await refused([TEST_SESSION_PROTOCOL, other.token], other)).toEqual(unauthorized);
    expect(await db.testSession.findUniqueOrThrow({ where: { id: other.id } })).toMatchObject({
      connectedAt: null,
      endedAt: null,
    });
    expect(await entriesOf(workspace, other.id)).toEqual([['hold', 'pending', '-1.5000']]);
  });

  it('answers a plain GET of the socket 426', async () => {
    const workspace = await workspaceWith();
    const created = await createSession(workspace);
    const response = await api.request('GET', `/v1/test-sessions/${created.id}/socket`);
    expect(response.status).toBe(426);
    expect(await response.json()).toMatchObject({ error: 'upgrade_required' });
  });

  it("refuses another workspace's agent (400 at agentId) and session (403), an unknown session, and a key without calls.test", async () => {
    const mine = await workspaceWith();
    const theirs = await workspaceWith();
    const foreignAgent = await api.request('POST', '/v1/test-sessions', {
      key: mine.key,
      body: { agentId: theirs.agentId },
    });
    expect(foreignAgent.status).toBe(400);
    expect(await foreignAgent.json()).toMatchObject({ error: 'invalid_body' });
    const unknownAgent = await api.request('POST', '/v1/test-sessions', {
      key: mine.key,
      body: { agentId: 'nope' },
    });
    expect(unknownAgent.status).toBe(400);
    expect(await db.testSession.count({ where: { workspaceId: mine.workspaceId } })).toBe(0);
    expect(await db.creditLedgerEntry.count({ where: { workspaceId: mine.workspaceId } })).toBe(1); // the grant

    const theirSession = await createSession(theirs);
    for (const id of [theirSession.id, '00000000-0000-4000-8000-000000000000', 'nope']) {
      const response = await api.request('GET', `/v1/test-sessions/${id}`, { key: mine.key });
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: 'forbidden' });
    }

    const viewer = await workspaceWith({ scopes: ['calls.view'] });
    const refused = await api.request('POST', '/v1/test-sessions', {
      key: viewer.key,
      body: { agentId: viewer.agentId },
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'forbidden', requiredPermission: 'calls.test' });
  });

  it('refuses bad bodies with 400 and nothing recorded', async () => {
    const workspace = await workspaceWith();
    for (const body of [
      {},
      { agentId: workspace.agentId, extra: 1 },
      { agentId: workspace.agentId, lead: { phone: 'not a phone' } },
      { agentId: workspace.agentId, lead: { name: 'x'.repeat(201) } },
    ]) {
      const response = await api.request('POST', '/v1/test-sessions', { key: workspace.key, body });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_body' });
    }
    expect(await db.testSession.count({ where: { workspaceId: workspace.workspaceId } })).toBe(0);
  });

  it('refuses a workspace without a minute of credit with 402 insufficient_credits, nothing recorded', async () => {
    const broke = await workspaceWith({ credits: 0 });
    const response = await api.request('POST', '/v1/test-sessions', {
      key: broke.key,
      body: { agentId: broke.agentId },
    });
    expect(response.status).toBe(402);
    expect(await response.json()).toEqual({ error: 'insufficient_credits', balance: '0.0000', required: '0.1000' });
    expect(await db.testSession.count({ where: { workspaceId: broke.workspaceId } })).toBe(0);
  });
});

describe('web test sessions are billed exactly once', () => {
  it('when the client drops the socket', async () => {
    const workspace = await workspaceWith({ credits: 1 });
    const created = await createSession(workspace);
    const client = await connect(created, created.token);
    await client.turn();
    client.ws.terminate();
    const ended = await endedInDatabase(created.id);
    expect(ended).toMatchObject({ endReason: 'client_dropped', outcome: 'incomplete' });
    await until(
      () => entriesOf(workspace, created.id),
      (entries) => entries.length === 3,
    );
    // The sweeps find it settled: nothing more.
    await sweepTestSessions(api.services, { silentForMs: 0 });
    expect(await workerSweepSettles(created.id)).toMatchObject({ duplicate: true });
    expect(await entriesOf(workspace, created.id)).toEqual([
      ['hold', 'posted', '-1.0000'],
      ['hold_release', 'posted', '1.0000'],
      ['test_call', 'posted', '-0.1000'],
    ]);
  });

  it('when the API stops: ended api_stopping, told, and charged', async () => {
    const stopping = await startTestApi({ db, url, temporal, testSessions: { sweepEveryMs: 0 } });
    const workspace = await workspaceWith({ credits: 1 });
    const created = await createSession(workspace, {}, stopping);
    const client = await connect(created, created.token);
    await client.turn();
    client.send({ type: 'message', text: 'Green.' });
    await client.turn();
    await stopping.closeTestSessions();
    expect(await client.next()).toEqual({ type: 'ended', reason: 'api_stopping', outcome: 'incomplete' });
    expect(await client.closed).toBe(1001);
    expect(await entriesOf(workspace, created.id)).toEqual([
      ['hold', 'posted', '-1.0000'],
      ['hold_release', 'posted', '1.0000'],
      ['test_call', 'posted', '-0.1000'],
    ]);
  });

  it('when its process died: the sweep ends it at its last frame and charges up to there, once', async () => {
    const workspace = await workspaceWith({ credits: 1 });
    const created = await createSession(workspace);
    // As a process that opened the socket and died: connected 10 minutes ago, last frame 90 s after.
    const connectedAt = new Date(Date.now() - 10 * 60_000);
    await db.testSession.update({
      where: { id: created.id },
      data: { connectedAt, lastActivityAt: new Date(connectedAt.getTime() + 90_000) },
    });
    expect(await sweepTestSessions(api.services, { silentForMs: 3 * 60_000 })).toBeGreaterThanOrEqual(1);
    expect(await db.testSession.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({
      endReason: 'abandoned',
      outcome: 'incomplete',
      durationMs: 90_000,
    });
    await sweepTestSessions(api.services, { silentForMs: 3 * 60_000 });
    expect(await entriesOf(workspace, created.id)).toEqual([
      ['hold', 'posted', '-1.0000'],
      ['hold_release', 'posted', '1.0000'],
      ['test_call', 'posted', '-0.2000'],
    ]);
  });

  it("the worker's sweep of abandoned holds settles a session nobody ended, once", async () => {
    const workspace = await workspaceWith({ credits: 1 });
    const created = await createSession(workspace);
    const connectedAt = new Date(Date.now() - 10 * 60_000);
    await db.testSession.update({
      where: { id: created.id },
      data: { connectedAt, lastActivityAt: new Date(connectedAt.getTime() + 150_000) },
    });
    expect(await workerSweepSettles(created.id)).toMatchObject({ duplicate: false });
    expect(await db.testSession.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({
      endReason: 'abandoned',
      durationMs: 150_000,
    });
    expect(await entriesOf(workspace, created.id)).toEqual([
      ['hold', 'posted', '-1.0000'],
      ['hold_release', 'posted', '1.0000'],
      ['test_call', 'posted', '-0.3000'],
    ]);
    expect(await workerSweepSettles(created.id)).toMatchObject({ duplicate: true });
    expect(await entriesOf(workspace, created.id)).toHaveLength(3);
  });

  it('a token never used: ended never_connected by the sweep, its hold voided, nothing charged', async () => {
    const workspace = await workspaceWith({ credits: 1 });
    const created = await createSession(workspace);
    await db.testSession.update({ where: { id: created.id }, data: { tokenExpiresAt: new Date(Date.now() - 1000) } });
    await sweepTestSessions(api.services, { silentForMs: 3 * 60_000 });
    expect(await db.testSession.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({
      endReason: 'never_connected',
      durationMs: null,
    });
    expect(await entriesOf(workspace, created.id)).toEqual([
      ['hold', 'voided', '-1.0000'],
      ['hold_release', 'posted', '1.0000'],
    ]);
  });
});
