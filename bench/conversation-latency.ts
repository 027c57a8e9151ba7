// `npm run bench:conversation-latency` (issue 30): how fast the API answers a caller on a ConversationRelay socket, and
// how many conversations one API process holds. The API runs as deployed (api/main.ts in its own process,
// CONVERSATION_ENGINE=relay) on a durable embedded PostgreSQL; no Temporal (the API starts without it, and a relay
// conversation uses none); the OpenAI twin (simulators/openai-twin/main.ts) in its own process with a fixed first-token
// delay. The bench plays Twilio on signed sockets (bench/relay-caller.ts), each on a dialing call of its own inserted
// in bulk (the socket claims its call once).
// 1. Turn latency, one conversation at a time: from the caller's `prompt` (last: true) to the first `text` token back,
//    p50/p99 over BENCH_SCRIPT_TURNS and BENCH_MODEL_TURNS turns, (a) the script engine (goal p99 < 50 ms) and (b) the
//    model engine over the twin (goal p99 <= the twin's own first-token p99 + 30 ms). The baseline of (b), in the same
//    run: after each product turn, the very request the API just sent the twin, sent again from the bench with the
//    `openai` SDK, timed to its first content delta. Overhead = product - fixture.
// 2. Concurrency of the script engine: conversations added in steps (BENCH_STEPS), each answering the agent
//    BENCH_TURN_GAP_MS (random 0.5x to 1.5x) after its last token, a new call when one ends; per step the turns' latency,
//    the turns a second, and the CPU per turn of the API process (its threads' schedstat, to the ns) and of PostgreSQL
//    (/proc stat), until the first step whose p50 is at least twice the first step's (one conversation at the same
//    pace). Then the idle cost: the API's CPU a second with the last step's conversations open and silent, against none
//    open (RELAY_SILENCE_TIMEOUT_MS at its maximum, 60 s, so that no silence re-prompt falls in the idle window).
// Writes bench/results/conversation-latency.{json,md}.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { nodeArgsFromEnv, startBenchProcess } from './bench-process';
import { startBenchPostgres } from './bench-postgres';
import { cpuNow, liveThreadsCpuSeconds, percentile } from './measure';
import { cpuSecondsWithEndedBackends, groupOf, waitForExit } from './production-leads';
import { openRelayConversation, type RelayBenchCall, type RelayBenchConversation } from './relay-caller';
import { benchMachine, writeBenchResults } from './results-files';
import { ensureTwilioTwinConnection } from '../lib/carriers/twin';
import { createDatabase } from '../lib/database';
import { createWorkspace } from '../lib/door/workspace-admin';
import { poolSql } from '../lib/run-sql';
import { keyringSchema, newKeyringEntry } from '../lib/secrets/keyring';
import { createSqlPool } from '../lib/sql-pool';
import { freePort } from '../scripts/stack/child-process';
import { OPENAI_TWIN_API_KEY } from '../simulators/openai-twin/config';

const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SCRIPT_TURNS = setting('BENCH_SCRIPT_TURNS', 300);
const MODEL_TURNS = setting('BENCH_MODEL_TURNS', 300);
const FIRST_TOKEN_MS = setting('BENCH_FIRST_TOKEN_MS', 200);
const STEPS = (process.env.BENCH_STEPS ?? '1,10,50,100,200,400,800,1600,3200').split(',').map(Number);
const STEP_SECONDS = setting('BENCH_STEP_SECONDS', 15);
/** A step's window lasts until it holds this many turns too (at most 120 s): one paced conversation gives few. */
const MIN_STEP_TURNS = setting('BENCH_MIN_STEP_TURNS', 20);
/** No step starts after this many seconds of the run: the whole bench stays within about 8 minutes. */
const BUDGET_SECONDS = setting('BENCH_BUDGET_SECONDS', 420);
const TURN_GAP_MS = setting('BENCH_TURN_GAP_MS', 3000);
const IDLE_SECONDS = setting('BENCH_IDLE_SECONDS', 10);
/** Part 1 answers this long after the agent's last token: the API idles between turns, as on a call. */
const LATENCY_GAP_MS = 20;
const SCRIPT_GOAL_P99_MS = 50;
const MODEL_OVERHEAD_GOAL_MS = 30;
/** The script's questions (the agents' limit): a script conversation is 50 turns, the last one the closing. */
const QUESTIONS = 50;
/** A model conversation: 19 turns, then goodbye (the twin's model calls end_call). */
const MODEL_TURNS_PER_CONVERSATION = 20;
const SILENCE_MS = 60_000;
const CALLER = '+14155550999';
const MODEL = 'twin-model';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (value: number, digits = 2) => Number(value.toFixed(digits));
const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? { count: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, maxMs: 0 }
    : {
        count: sorted.length,
        p50Ms: percentile(sorted, 0.5),
        p90Ms: percentile(sorted, 0.9),
        p99Ms: percentile(sorted, 0.99),
        maxMs: round(sorted.at(-1)!),
      };
};

/** The slowest turns kept with their place in their conversation (0: the first answer), to see where outliers fall. */
const slowest = (keep = 8) => {
  const turns: Array<{ ms: number; turn: number }> = [];
  return {
    add(ms: number, turn: number) {
      turns.push({ ms: round(ms), turn });
      turns.sort((a, b) => b.ms - a.ms);
      turns.length = Math.min(turns.length, keep);
    },
    turns,
  };
};

const runStarted = performance.now();
const loadAverageAtStart = os.loadavg().map((value) => round(value));
const slowestText = (turns: Array<{ ms: number; turn: number }>) =>
  turns.map((turn) => `${turn.ms} (${turn.turn})`).join(', ');
const postgres = await startBenchPostgres('bench-conversation-latency-');
const pool = createSqlPool(postgres.url, 4);
const sql = poolSql(pool);
const db = createDatabase(postgres.url, { poolSize: 2 });
const started: Array<{ stop(): void; pid: number }> = [];
process.once('exit', () => started.forEach((each) => each.stop()));
const open = new Set<RelayBenchConversation>();
/** Set when the callers are to stop (the end of the run, or a failure): each closes its socket. */
let stopping = false;
try {
  // The workspace, its Twilio-twin connection (whose twin does not run: nothing here dials; a dropped socket's hang-up
  // fails and is logged), and one agent of each engine with a campaign.
  const keyring = newKeyringEntry('bench');
  const { id: workspaceId } = await createWorkspace(db, 'Bench', { rateLimitPerMinute: 100_000_000 });
  const { connection } = await ensureTwilioTwinConnection(
    db,
    keyringSchema.parse(keyring),
    workspaceId,
    `http://127.0.0.1:${await freePort()}`,
  );
  const agentWith = (name: string, columns: { instructions?: string; firstMessage?: string }) =>
    db.agent.create({
      data: {
        workspaceId,
        name,
        language: 'en-US',
        voiceId: 'espeak-ng/en-us',
        script: {
          openingLine: 'Hello {{name}}, this is the shoe shop.',
          questions: Array.from(
            { length: QUESTIONS },
            (_, index) => `Which colour would you like for pair ${index + 1}?`,
          ),
          closing: 'Thank you, goodbye.',
        },
        ...columns,
      },
    });
  const scriptAgent = await agentWith('Script', {});
  const modelAgent = await agentWith('Model', {
    instructions: 'You are the shoe shop. Help the lead choose shoes.',
    firstMessage: 'How can I help you with your shoes today?',
  });

  /** `count` dialing calls of the agent, each with its lead, placed through the connection, in one statement. */
  const insertCalls = async (agentId: string, count: number): Promise<RelayBenchCall[]> => {
    const [campaign] = await sql<{ id: string }>(
      `INSERT INTO "Campaign" (id, "workspaceId", name, "agentId", "updatedAt") VALUES ($1, $2, 'Bench', $3, now()) RETURNING id`,
      randomUUID(),
      workspaceId,
      agentId,
    );
    // Each lead's workflow counts as started: the API's lead sweep leaves them alone.
    return sql<RelayBenchCall>(
      `WITH leads AS (
         INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, name, "workflowId",
                             "workflowStartedAt", "requestId", "updatedAt")
         SELECT gen_random_uuid(), $1::uuid, $2::uuid, 'bench-' || g, '+1415' || lpad(g::text, 7, '0'), 'Ana',
                'lead-bench-' || g || '-' || $2::uuid::text, now(), gen_random_uuid(), now()
           FROM generate_series(1, $3::int) g
         RETURNING id, phone)
       INSERT INTO "Call" (id, "workspaceId", "campaignId", "leadId", attempt, "attemptId", provider, status,
                           "providerCallId", "carrierConnectionId", "carrierStatus", "fromNumber", "toNumber",
                           "agentId", "startedAt", "workflowId")
       SELECT gen_random_uuid(), $1::uuid, $2::uuid, id, 1, id || ':1', 'twilio-twin', 'dialing',
              'CA' || replace(gen_random_uuid()::text, '-', ''), $4::uuid, 'in-progress', $5, phone, $6::uuid, now(),
              'lead-' || id
         FROM leads
       RETURNING "attemptId", "providerCallId" AS "callSid", "fromNumber" AS "from", "toNumber" AS "to"`,
      workspaceId,
      campaign!.id,
      count,
      connection.id,
      CALLER,
      agentId,
    );
  };
  const scriptCalls = await insertCalls(
    scriptAgent.id,
    Math.ceil(SCRIPT_TURNS / QUESTIONS) + 3 * Math.max(...STEPS) + 100,
  );
  const modelCalls = await insertCalls(modelAgent.id, Math.ceil(MODEL_TURNS / MODEL_TURNS_PER_CONVERSATION) + 2);
  const take = (calls: RelayBenchCall[]) => {
    const call = calls.pop();
    if (!call) throw new Error('the bench ran out of dialing calls; raise their count');
    return call;
  };

  const twinPort = await freePort();
  const twin = startBenchProcess('simulators/openai-twin/main.ts', {
    OPENAI_TWIN_PORT: String(twinPort),
    OPENAI_TWIN_FIRST_TOKEN_MS: String(FIRST_TOKEN_MS),
  });
  started.push(twin);
  const twinUrl = `http://127.0.0.1:${twinPort}`;
  const apiPort = await freePort();
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const api = startBenchProcess(
    'api/main.ts',
    {
      DATABASE_URL: postgres.url,
      PORT: String(apiPort),
      PUBLIC_BASE_URL: apiUrl,
      SECRETS_KEYS: keyring,
      // Nothing listens there: the API starts without Temporal (its connection is lazy) and a conversation needs none.
      TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
      CONVERSATION_ENGINE: 'relay',
      RELAY_SILENCE_TIMEOUT_MS: String(SILENCE_MS),
      DIALOGUE_PROVIDER: 'openai-compatible',
      DIALOGUE_BASE_URL: `${twinUrl}/v1`,
      DIALOGUE_MODEL: MODEL,
      DIALOGUE_API_KEY: OPENAI_TWIN_API_KEY,
      METRICS_PORT: 'off',
      EXPORT_DIR: path.join(postgres.workDir, 'exports'),
    },
    nodeArgsFromEnv('BENCH_API_NODE_ARGS'),
  );
  started.push(api);
  await Promise.all([twin.printed('openai twin listening'), api.printed('API listening')]);

  /**
   * One conversation on a new call: setup, then `answers` said one by one, each `gapMs()` after the agent's last token,
   * `before` awaited before each; `onTurn` gets each turn's first-token time. Closed at its end (or when `stop` says).
   */
  const converse = async (
    call: RelayBenchCall,
    answers: string[],
    options: {
      gapMs: () => number;
      onTurn: (firstTokenMs: number, index: number) => void | Promise<void>;
      before?: () => Promise<void>;
      stop?: () => boolean;
    },
  ) => {
    const conversation = await openRelayConversation(apiUrl, connection.id, call);
    open.add(conversation);
    try {
      await conversation.setup();
      for (const [index, answer] of answers.entries()) {
        await sleep(options.gapMs());
        await options.before?.();
        if (options.stop?.()) return;
        await options.onTurn((await conversation.say(answer)).firstTokenMs, index);
      }
      await conversation.ended;
    } finally {
      open.delete(conversation);
      await conversation.close();
    }
  };
  const SCRIPT_ANSWERS = ['Navy, please.', 'The red ones, I think.', 'Green would be nice.'];
  const scriptAnswers = Array.from({ length: QUESTIONS }, (_, index) => SCRIPT_ANSWERS[index % SCRIPT_ANSWERS.length]!);
  const modelAnswers = [
    ...Array.from({ length: MODEL_TURNS_PER_CONVERSATION - 1 }, () => 'I would like to hear about the navy shoes.'),
    'Goodbye.',
  ];

  // Part 1 (a): the script engine, one conversation at a time.
  const scriptTurns: number[] = [];
  const scriptSlowest = slowest();
  while (scriptTurns.length < SCRIPT_TURNS)
    await converse(take(scriptCalls), scriptAnswers, {
      gapMs: () => LATENCY_GAP_MS,
      onTurn: (ms, index) => {
        scriptTurns.push(ms);
        scriptSlowest.add(ms, index);
      },
    });
  console.error(`script engine: ${JSON.stringify(summary(scriptTurns))}`);
  const scriptLoadAverage = round(os.loadavg()[0]!);

  // Part 1 (b): the model engine over the twin, each turn followed by the same request straight to the twin.
  const openai = new OpenAI({ baseURL: `${twinUrl}/v1`, apiKey: OPENAI_TWIN_API_KEY, maxRetries: 0 });
  const twinControl = async (method: 'GET' | 'DELETE') => {
    const response = await fetch(`${twinUrl}/control/requests`, { method });
    if (!response.ok) throw new Error(`the twin's ${method} /control/requests: ${response.status}`);
    return method === 'GET'
      ? ((await response.json()) as { requests: Array<{ body: Record<string, unknown> }> })
      : null;
  };
  const fixtureFirstTokenMs = async (body: Record<string, unknown>) => {
    const begin = performance.now();
    const stream = await openai.chat.completions.create({
      ...body,
      stream: true,
    } as ChatCompletionCreateParamsStreaming);
    let first: number | null = null;
    for await (const chunk of stream) if (first === null && chunk.choices[0]?.delta?.content) first = performance.now();
    if (first === null) throw new Error('the twin streamed no content');
    return first - begin;
  };
  const modelTurns: number[] = [];
  const modelSlowest = slowest();
  const fixtureTurns: number[] = [];
  await twinControl('DELETE');
  while (modelTurns.length < MODEL_TURNS)
    await converse(take(modelCalls), modelAnswers, {
      gapMs: () => LATENCY_GAP_MS,
      before: async () => void (await twinControl('DELETE')),
      onTurn: async (ms, index) => {
        modelTurns.push(ms);
        modelSlowest.add(ms, index);
        // The turn's first request (a goodbye's second one, after its tool, is not the first token's).
        const sent = (await twinControl('GET'))!.requests.find((request) => request.body.stream === true);
        if (!sent) throw new Error('the API sent the twin no streamed request for the turn');
        await sleep(LATENCY_GAP_MS);
        fixtureTurns.push(await fixtureFirstTokenMs(sent.body));
      },
    });
  console.error(
    `model engine: ${JSON.stringify(summary(modelTurns))}, fixture ${JSON.stringify(summary(fixtureTurns))}`,
  );

  const modelLoadAverage = round(os.loadavg()[0]!);
  const script = summary(scriptTurns);
  const model = summary(modelTurns);
  const fixture = summary(fixtureTurns);
  const overhead = { p50Ms: round(model.p50Ms - fixture.p50Ms), p99Ms: round(model.p99Ms - fixture.p99Ms) };

  /** CPU of the API, PostgreSQL and the bench over `run`, in seconds by group. */
  const cpuOver = async <T>(run: () => Promise<T>) => {
    const before = cpuNow();
    const apiBefore = liveThreadsCpuSeconds(api.pid);
    const benchBefore = process.cpuUsage();
    const begin = performance.now();
    const result = await run();
    const seconds = (performance.now() - begin) / 1000;
    const after = cpuNow();
    const apiSeconds = liveThreadsCpuSeconds(api.pid) - apiBefore;
    const bench = process.cpuUsage(benchBefore);
    const groups = cpuSecondsWithEndedBackends(
      before,
      after,
      groupOf({ API: api.pid, 'OpenAI twin': twin.pid }, after),
    );
    return {
      result,
      seconds,
      api: apiSeconds,
      postgres: groups.PostgreSQL ?? 0,
      bench: (bench.user + bench.system) / 1e6,
    };
  };

  // Part 2: conversations held at once by the script engine.
  const idleNone = await cpuOver(() => sleep(IDLE_SECONDS * 1000));
  let window: number[] | null = null;
  let completedInWindow = 0;
  let errors = 0;
  let silent = false;
  let slots = 0;
  const gap = () => TURN_GAP_MS * (0.5 + Math.random());
  const slot = async () => {
    await sleep(Math.random() * TURN_GAP_MS);
    while (!stopping) {
      while (silent && !stopping) await sleep(200);
      if (stopping) return;
      try {
        await converse(take(scriptCalls), scriptAnswers, {
          gapMs: gap,
          before: async () => {
            while (silent && !stopping) await sleep(200);
          },
          stop: () => stopping,
          onTurn: (ms) => {
            // A turn counts in the window it was measured in.
            if (window) {
              window.push(ms);
              completedInWindow += 1;
            }
          },
        });
      } catch (error) {
        errors += 1;
        if (errors <= 5) console.error(`a conversation failed: ${(error as Error).message}`);
      }
    }
  };
  const running: Promise<void>[] = [];
  /** The one-conversation p50 of this part, at its pace: step 1's (part 1 answers 20 ms after each turn instead). */
  let reference: number | null = null;
  const steps: Array<{
    conversations: number;
    turns: number;
    turnsPerSecond: number;
    p50Ms: number;
    p90Ms: number;
    p99Ms: number;
    maxMs: number;
    apiCpuMsPerTurn: number;
    apiCpuMsPerTurnAboveIdle: number;
    apiCpuPercent: number;
    postgresCpuMsPerTurn: number;
    benchCpuMsPerTurn: number;
    errors: number;
    loadAverage1m: number;
  }> = [];
  let doubledAt: number | null = null;
  const idleApiPerSecond = idleNone.api / idleNone.seconds;
  for (const conversations of STEPS) {
    if ((performance.now() - runStarted) / 1000 > BUDGET_SECONDS) {
      console.error(`${conversations} conversations: not run, past the run's budget of ${BUDGET_SECONDS} s`);
      break;
    }
    while (slots < conversations) {
      slots += 1;
      running.push(slot());
    }
    // The new conversations open within one gap and take their pace; then the window.
    await sleep(TURN_GAP_MS + 2000);
    const errorsBefore = errors;
    window = [];
    completedInWindow = 0;
    const measured = await cpuOver(async () => {
      const until = performance.now() + 120_000;
      await sleep(STEP_SECONDS * 1000);
      while (completedInWindow < MIN_STEP_TURNS && performance.now() < until) await sleep(250);
    });
    const latencies = window;
    const turns = completedInWindow;
    window = null;
    const figures = summary(latencies);
    const perTurn = (seconds: number) => round((seconds * 1000) / Math.max(1, turns), 3);
    steps.push({
      conversations,
      turns,
      turnsPerSecond: round(turns / measured.seconds, 1),
      p50Ms: figures.p50Ms,
      p90Ms: figures.p90Ms,
      p99Ms: figures.p99Ms,
      maxMs: figures.maxMs,
      apiCpuMsPerTurn: perTurn(measured.api),
      // Less what the API spends with no conversation at all (its sweeps), over the same seconds.
      apiCpuMsPerTurnAboveIdle: perTurn(Math.max(0, measured.api - idleApiPerSecond * measured.seconds)),
      apiCpuPercent: round((measured.api / measured.seconds) * 100, 1),
      postgresCpuMsPerTurn: perTurn(measured.postgres),
      benchCpuMsPerTurn: perTurn(measured.bench),
      errors: errors - errorsBefore,
      loadAverage1m: round(os.loadavg()[0]!),
    });
    console.error(`${conversations} conversations: ${JSON.stringify(steps.at(-1))}`);
    reference ??= figures.p50Ms;
    if (figures.p50Ms >= 2 * reference) {
      doubledAt = conversations;
      break;
    }
  }

  // The idle cost: the conversations of the last step open, nobody speaking.
  silent = true;
  await sleep(TURN_GAP_MS * 1.5 + 2000);
  const openSilent = open.size;
  const idleOpen = await cpuOver(() => sleep(IDLE_SECONDS * 1000));
  stopping = true;
  await Promise.all([...open].map((conversation) => conversation.close()));
  await Promise.all(running);
  const idleMsPerSecond = (cpu: { api: number; seconds: number }) => round((cpu.api * 1000) / cpu.seconds, 2);
  const idle = {
    seconds: IDLE_SECONDS,
    none: {
      apiCpuMsPerSecond: idleMsPerSecond(idleNone),
      postgresCpuMsPerSecond: round((idleNone.postgres * 1000) / idleNone.seconds, 2),
    },
    open: {
      conversations: openSilent,
      apiCpuMsPerSecond: idleMsPerSecond(idleOpen),
      postgresCpuMsPerSecond: round((idleOpen.postgres * 1000) / idleOpen.seconds, 2),
    },
    apiCpuUsPerConversationSecond: round(
      ((idleMsPerSecond(idleOpen) - idleMsPerSecond(idleNone)) * 1000) / Math.max(1, openSilent),
      1,
    ),
    apiRssMb: api.memory().rssMb,
  };

  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: {
      api: 'api/main.ts in its own process (tsx), CONVERSATION_ENGINE=relay, DIALOGUE_PROVIDER=openai-compatible',
      apiNodeArgs: api.nodeArgs,
      postgres: 'embedded PostgreSQL, durable (fsync on)',
      temporal: 'none (the API starts without it; a relay conversation uses none)',
      openAiTwin: `simulators/openai-twin/main.ts in its own process, OPENAI_TWIN_FIRST_TOKEN_MS=${FIRST_TOKEN_MS}`,
      relaySilenceTimeoutMs: SILENCE_MS,
      scriptQuestions: QUESTIONS,
      modelTurnsPerConversation: MODEL_TURNS_PER_CONVERSATION,
      latencyGapMs: LATENCY_GAP_MS,
      turnGapMs: TURN_GAP_MS,
      stepSeconds: STEP_SECONDS,
      minStepTurns: MIN_STEP_TURNS,
      loadAverageAtStart,
    },
    latency: {
      script: {
        ...script,
        slowest: scriptSlowest.turns,
        loadAverage1mAtEnd: scriptLoadAverage,
        goalP99Ms: SCRIPT_GOAL_P99_MS,
        met: script.p99Ms < SCRIPT_GOAL_P99_MS,
      },
      model: {
        ...model,
        slowest: modelSlowest.turns,
        loadAverage1mAtEnd: modelLoadAverage,
        fixture,
        overhead,
        goalP99Ms: round(fixture.p99Ms + MODEL_OVERHEAD_GOAL_MS),
        met: model.p99Ms <= fixture.p99Ms + MODEL_OVERHEAD_GOAL_MS,
      },
    },
    concurrency: { referenceP50Ms: reference, doubledAt, steps, errors },
    idle,
  };

  const load = os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');
  const latencyRow = (name: string, figures: ReturnType<typeof summary>, goal: string) =>
    `| ${name} | ${figures.count} | ${figures.p50Ms} | ${figures.p90Ms} | ${figures.p99Ms} | ${figures.maxMs} | ${goal} |`;
  const met = (pass: boolean) => (pass ? 'met' : '**not met**');
  writeBenchResults('conversation-latency', result, [
    `# Conversation latency over ConversationRelay (${result.measuredAt})`,
    '',
    `${result.machine.cpus} CPUs (${result.machine.model}), shared; Node ${result.machine.node}; load average at the start ${loadAverageAtStart.join(', ')}, at the end ${load}. ` +
      'The API (`api/main.ts`, its own process, `CONVERSATION_ENGINE=relay`) on a durable embedded PostgreSQL, no Temporal; ' +
      `the OpenAI twin in its own process with a first-token delay of ${FIRST_TOKEN_MS} ms. The bench plays Twilio on signed ` +
      'sockets, each on a dialing call of its own (`bench/conversation-latency.ts`).',
    '',
    '## Turn latency, one conversation at a time',
    '',
    `From the caller's \`prompt\` (\`last: true\`) to the first \`text\` token back; the bench answers ${LATENCY_GAP_MS} ms after the agent's last token. ` +
      `Script conversations of ${QUESTIONS} turns; model conversations of ${MODEL_TURNS_PER_CONVERSATION} (the last a goodbye). ` +
      'The fixture: after each model turn, the very request the API sent the twin, sent again by the bench with the `openai` SDK, to its first content delta.',
    '',
    '| | turns | p50 ms | p90 ms | p99 ms | max ms | goal |',
    '|-|-|-|-|-|-|-|',
    latencyRow('(a) script engine', script, `p99 < ${SCRIPT_GOAL_P99_MS} ms: ${met(result.latency.script.met)}`),
    latencyRow(
      '(b) model engine over the twin',
      model,
      `p99 <= ${result.latency.model.goalP99Ms} ms: ${met(result.latency.model.met)}`,
    ),
    latencyRow("the twin's own first token (fixture)", fixture, ''),
    `| the product's overhead (b − fixture) | | ${overhead.p50Ms} | | ${overhead.p99Ms} | | p99 +${MODEL_OVERHEAD_GOAL_MS} ms at most |`,
    '',
    `The slowest turns, ms (the answer's place in its conversation, 0 the first): script ${slowestText(scriptSlowest.turns)}; model ${slowestText(modelSlowest.turns)}. ` +
      `Load average (1 min) at the end of each: script ${scriptLoadAverage}, model ${modelLoadAverage}.`,
    '',
    '## Conversations held at once (script engine)',
    '',
    `Each conversation answers the agent ${TURN_GAP_MS} ms (random 0.5x to 1.5x) after its last token, and a new call starts when one ends ` +
      `(${QUESTIONS} turns each). Each step is measured after its new conversations have opened, for ${STEP_SECONDS} s and at least ${MIN_STEP_TURNS} turns. ` +
      'CPU from /proc per turn completed in the window: the API process (and the same less its CPU with no conversation, ' +
      `${idle.none.apiCpuMsPerSecond} ms/s, over the window), PostgreSQL (its backends) and the bench (the callers).`,
    '',
    '| conversations | turns | turns/s | p50 ms | p90 ms | p99 ms | max ms | API CPU ms/turn | above idle | API CPU % | PostgreSQL CPU ms/turn | bench CPU ms/turn | failed conversations | load average (1 min) |',
    '|-|-|-|-|-|-|-|-|-|-|-|-|-|-|',
    ...steps.map(
      (step) =>
        `| ${step.conversations} | ${step.turns} | ${step.turnsPerSecond} | ${step.p50Ms} | ${step.p90Ms} | ${step.p99Ms} | ${step.maxMs} | ${step.apiCpuMsPerTurn} | ${step.apiCpuMsPerTurnAboveIdle} | ${step.apiCpuPercent} | ${step.postgresCpuMsPerTurn} | ${step.benchCpuMsPerTurn} | ${step.errors} | ${step.loadAverage1m} |`,
    ),
    '',
    doubledAt === null
      ? `The p50 stayed under twice the first step's (${reference} ms, one conversation at this pace) up to ${steps.at(-1)?.conversations} conversations, the last step run.`
      : `First step whose p50 is at least twice the first step's (${reference} ms, one conversation at this pace): **${doubledAt} conversations**.`,
    '',
    '## Idle cost',
    '',
    `The API's CPU over ${IDLE_SECONDS} s with no conversation, and with the last step's ${openSilent} conversations open and silent ` +
      `(\`RELAY_SILENCE_TIMEOUT_MS=${SILENCE_MS}\`, its maximum: no silence re-prompt falls in the window, each being the agent's words' ` +
      'speaking time plus 60 s after its last turn).',
    '',
    '| | conversations | API CPU ms/s | PostgreSQL CPU ms/s |',
    '|-|-|-|-|',
    `| none open | 0 | ${idle.none.apiCpuMsPerSecond} | ${idle.none.postgresCpuMsPerSecond} |`,
    `| open, silent | ${openSilent} | ${idle.open.apiCpuMsPerSecond} | ${idle.open.postgresCpuMsPerSecond} |`,
    '',
    `Per open conversation: ${idle.apiCpuUsPerConversationSecond} µs of the API's CPU a second; the API's RSS then ${idle.apiRssMb} MB.`,
    '',
  ]);
  console.log(JSON.stringify(result, null, 2));
  for (const each of started) each.stop();
  await Promise.all(started.map((each) => waitForExit(each.pid)));
} finally {
  stopping = true;
  await Promise.all([...open].map((conversation) => conversation.close()));
  await pool.end();
  await db.$disconnect();
  await postgres.stop();
}
process.exit(0);
