// Workspace A's clients in the noisy-neighbour proof (test/hostile/noisy-neighbour.test.ts), as a process of their own:
// in production an attacker's clients run elsewhere, so their own work (sockets, every token frame of the agent's
// turns, request bodies at the cap) must not run on the event loop that serves workspace B and measures its latency.
// Prints the plan's floodingLine once its floods have begun (the test measures from there, not while this process
// loads), floods the API until SIGTERM, then ends its test sessions, prints what it did as one JSON line and exits.
// Argument: the AttackPlan as JSON.
import WebSocket from 'ws';

export interface AttackPlan {
  baseUrl: string;
  key: string;
  /** The hostile call whose intelligence is re-run every 500 ms (each a full CPU budget in a worker thread). */
  callId: string;
  sessionAgentId: string;
  protocol: string;
  /** Printed once the floods have begun. */
  floodingLine: string;
  /** The first message of each session (the card-number rule is on), then `flood` after each of the agent's turns. */
  card: string;
  flood: string;
  /** Public webhooks flooded back to back with `junk`, unsigned. */
  targets: string[];
  junk: string;
}

export interface AttackDone {
  jobIds: string[];
  webhookStatuses: Record<string, number>;
  sessionMessages: number[];
  /** What went wrong (a status or frame the attack did not expect): the test fails on any. */
  problems: string[];
}

const plan = JSON.parse(process.argv[2]!) as AttackPlan;
const done: AttackDone = { jobIds: [], webhookStatuses: {}, sessionMessages: [], problems: [] };
let stopped = false;

function request(method: string, path: string, body?: unknown, authorised = true): Promise<Response> {
  const headers: Record<string, string> = {};
  if (authorised) headers.authorization = `Bearer ${plan.key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${plan.baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function rerunIntelligence() {
  while (!stopped) {
    const response = await request('POST', `/calls/${plan.callId}/intelligence`);
    if (response.status === 202) done.jobIds.push(((await response.json()) as { jobId: string }).jobId);
    else done.problems.push(`intelligence re-run answered ${response.status}: ${await response.text()}`);
    await pause(500);
  }
}

async function floodWebhooks() {
  for (let index = 0; !stopped; index += 1) {
    const response = await request('POST', plan.targets[index % plan.targets.length]!, plan.junk, false);
    await response.arrayBuffer();
    done.webhookStatuses[response.status] = (done.webhookStatuses[response.status] ?? 0) + 1;
  }
}

/** One test session driven to its end: the messages it sent. */
async function floodedSession(): Promise<number> {
  const response = await request('POST', '/v1/test-sessions', {
    agentId: plan.sessionAgentId,
    lead: { name: 'Ana', phone: '+14155550100' },
  });
  if (response.status !== 201) {
    done.problems.push(`a test session answered ${response.status}: ${await response.text()}`);
    await pause(500);
    return 0;
  }
  const { url, token } = (await response.json()) as { url: string; token: string };
  const ws = new WebSocket(url, [plan.protocol, token]);
  let sent = 0;
  await new Promise<void>((resolve) => {
    ws.on('message', (data: Buffer) => {
      const text = data.toString('utf8');
      const frame = JSON.parse(text) as { type: string };
      if (frame.type === 'error') done.problems.push(`a session frame: ${text}`);
      if (frame.type !== 'turn_end') return;
      if (stopped) return ws.send(JSON.stringify({ type: 'end' }));
      ws.send(JSON.stringify({ type: 'message', text: sent === 0 ? plan.card : plan.flood }));
      sent += 1;
    });
    ws.on('close', () => resolve());
    ws.on('error', (error) => {
      done.problems.push(`a session socket: ${error.message}`);
      resolve();
    });
  });
  return sent;
}

async function floodSessions() {
  while (!stopped) done.sessionMessages.push(await floodedSession());
}

const running = Promise.all([rerunIntelligence(), floodWebhooks(), floodSessions()]);
process.stdout.write(`${plan.floodingLine}\n`);
process.once('SIGTERM', () => {
  stopped = true;
  void running.then(() => {
    process.stdout.write(`${JSON.stringify(done)}\n`);
    process.exit(0);
  });
});
