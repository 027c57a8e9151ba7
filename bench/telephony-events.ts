// `npm run bench:telephony-events`: the throughput of carriers' status events, POST
// /telephony/{provider}/events, with the signature checked and the event applied to a real Call row, next
// to a bare route of the same app, alternating rounds, on a real PostgreSQL, with the load generated in
// its own process (bench/load-signed-events.ts), which signs every event as a carrier would.
//
// - events: BENCH_CALLS calls are made first as the ladder records them after the dial (status dialing,
//   the carrier's call id known). Each is sent ringing, then in-progress, each event with an eventId of
//   its own: every request locks the call, records the event once and moves the call forward (two
//   consecutive requests of one call may cross on two connections: then the later state wins and the other
//   is recorded as not applied; the share applied is reported). No terminal event: those also signal a
//   Temporal workflow, which is Temporal's throughput, not the endpoint's. Every run takes calls no run
//   used before (when BENCH_CALLS runs out they wrap around and events stop applying: reported).
// - bare: POST /bench/telephony/{provider}/events, the same params, body schema and response schema,
//   registered through the same registerRoutes (raw body kept, zod body validation, JSON answer) in the
//   same Express app ahead of the real routes, answering { received: true, applied: false } with no
//   signature check and no database. The same signed bodies are sent to it.
// - In process: the cost of one verifyEventSignature (and one signEvent) on a typical event body.
// Writes bench/results/telephony-events.json and .md.
//
// BENCH_CARRIER=twilio (`npm run bench:twilio-callbacks`): the same for Twilio's status callbacks through a twilio-twin
// carrier connection, POST /telephony/twilio/{connectionId}/calls/{attemptId}/status: form-encoded, X-Twilio-Signature
// checked with the connection's auth token over the public URL (the connection and the attempt's call on it read in
// one named statement per request, its secrets opened once per envelope), the event applied by CallSid and SequenceNumber. The bare route is registered the same
// way (form body, the same schemas) with no signature and no database. Writes bench/results/twilio-callbacks.*.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import { z } from 'zod';
import { webhookAgainstBare, type LoadRun } from './alternating-rounds';
import { benchAppServices } from './bench-app-services';
import { twilioStatusForm } from './twilio-callback-form';
import { microsecondsPer } from './measure';
import { startBenchPostgres } from './bench-postgres';
import { benchMachine, writeBenchResults } from './results-files';
import { createApp } from '../api/app';
import { registerRoutes } from '../api/http/register-routes';
import { defineRoute } from '../api/http/route';
import { telephonyEventRoutes } from '../api/calls/telephony-events-routes';
import { applyCallEvent } from '../lib/calls/call-end';
import { prismaSql } from '../lib/run-sql';
import { createDatabase } from '../lib/database';
import { callEventSchema } from '../lib/calls/call-event';
import { signEvent, verifyEventSignature, SIGNATURE_HEADER } from '../lib/calls/signature';
import twilio from 'twilio';
import { signedByTwilio, twilioStatusCallbackSchema } from '../lib/carriers/twilio/twilio-callbacks';
import { TWILIO_CALL_ROUTE } from '../lib/carriers/twilio/twilio-urls';
import { ensureTwilioTwinConnection, TWILIO_TWIN_AUTH_TOKEN } from '../lib/carriers/twin';
import { keyringSchema, newKeyringEntry } from '../lib/secrets/keyring';
import { twilioRoutes } from '../api/carriers/twilio-routes';
import { FORM_MEDIA_TYPE } from '../api/http/route';
import { freePort } from '../scripts/stack/child-process';
import { addMember, createWorkspace } from '../lib/door/workspace-admin';
import { projectRoot } from '../scripts/stack/paths';

const CONCURRENCY = (process.env.BENCH_CONNECTIONS ?? '1,10').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CALLS = Number(process.env.BENCH_CALLS ?? 60_000);
const VERIFICATIONS = Number(process.env.BENCH_VERIFICATIONS ?? 100_000);
const APPLIED_IN_PROCESS = Number(process.env.BENCH_APPLIED_IN_PROCESS ?? 500);
const TWILIO = process.env.BENCH_CARRIER === 'twilio';
const PROVIDER = TWILIO ? 'twilio-twin' : 'simulated';
/** The simulated carrier's signing secret, or the twin connection's auth token (the load signs with it). */
const SECRET = TWILIO ? TWILIO_TWIN_AUTH_TOKEN : `bench-${randomUUID()}`;
const RESULTS = TWILIO ? 'twilio-callbacks' : 'telephony-events';

const bench = await startBenchPostgres('bench-telephony-events-');
try {
  // 1. The signature alone, in this process.
  const sampleUrl = `http://127.0.0.1:3000/telephony/twilio/${randomUUID()}/calls/${randomUUID()}:1/status`;
  const sampleForm = twilioStatusForm(`CA${'0'.repeat(32)}`, 'ringing', 1);
  const sampleBody = Buffer.from(
    JSON.stringify({
      eventId: `${randomUUID()}:0`,
      providerCallId: `sim_${'0'.repeat(24)}`,
      attemptId: `${randomUUID()}:1`,
      status: 'ringing',
      answeredBy: null,
      durationMs: null,
      reason: null,
      occurredAt: new Date().toISOString(),
    }),
  );
  const header = signEvent(SECRET, sampleBody);
  if (!verifyEventSignature(SECRET, sampleBody, header)) throw new Error('the sample signature does not verify');
  const twilioHeader = twilio.getExpectedTwilioSignature(SECRET, sampleUrl, sampleForm);
  if (!signedByTwilio(SECRET, twilioHeader, sampleUrl, sampleForm))
    throw new Error('the Twilio sample does not verify');
  const signature = TWILIO
    ? {
        bodyBytes: new URLSearchParams(sampleForm).toString().length,
        verifyUs: microsecondsPer(VERIFICATIONS, () => signedByTwilio(SECRET, twilioHeader, sampleUrl, sampleForm)),
        signUs: microsecondsPer(VERIFICATIONS, () => twilio.getExpectedTwilioSignature(SECRET, sampleUrl, sampleForm)),
      }
    : {
        bodyBytes: sampleBody.length,
        verifyUs: microsecondsPer(VERIFICATIONS, () => verifyEventSignature(SECRET, sampleBody, header)),
        signUs: microsecondsPer(VERIFICATIONS, () => signEvent(SECRET, sampleBody)),
      };
  console.error('signature', signature);

  // 2. Calls as the ladder records them once dialed: a campaign's leads, each with one dialing call.
  const db = createDatabase(bench.url, { poolSize: 10 });
  const { id: workspaceId } = await createWorkspace(db, 'Bench', {});
  await addMember(db, workspaceId, 'bench@bench.localhost', 'owner');
  const campaign = await db.campaign.create({ data: { workspaceId, name: 'Bench', status: 'RUNNING' } });
  // Twilio: the calls are placed through a twilio-twin connection, as the dial records them; the API verifies with
  // its auth token over the URL it is reached at.
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const keyring = TWILIO ? keyringSchema.parse(newKeyringEntry('bench')) : undefined;
  const connectionId = keyring
    ? (await ensureTwilioTwinConnection(db, keyring, workspaceId, 'http://127.0.0.1:9')).connection.id
    : null;
  const rows = await db.$queryRawUnsafe<Array<{ attemptId: string; providerCallId: string }>>(
    `WITH leads AS (
       INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, "workflowId", "requestId", status, "updatedAt")
       SELECT gen_random_uuid(), $1::uuid, $2::uuid, 'bench-' || n, '+14155550120', 'lead-bench-' || n, gen_random_uuid(), 'dialing', now()
         FROM generate_series(1, $3::int) AS n
       RETURNING id)
     INSERT INTO "Call" (id, "workspaceId", "campaignId", "leadId", attempt, "attemptId", provider, status, "providerCallId", "startedAt", "carrierConnectionId")
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, id, 1, id::text || ':1', $4, 'dialing',
            CASE WHEN $5::uuid IS NULL THEN 'sim_' ELSE 'CA' END || md5(id::text), now() AT TIME ZONE 'UTC', $5::uuid
       FROM leads
     RETURNING "attemptId", "providerCallId"`,
    workspaceId,
    campaign.id,
    CALLS,
    PROVIDER,
    connectionId,
  );
  const callsFile = path.join(bench.workDir, 'calls.txt');
  writeFileSync(callsFile, rows.map((row) => `${row.attemptId} ${row.providerCallId}`).join('\n'));

  // 3. One app: the real routes, and the bare route registered the same way ahead of them.
  const { services, close } = await benchAppServices(
    db,
    bench.url,
    TWILIO ? { carrierKeyring: keyring, publicBaseUrl: baseUrl } : { telephonySigningSecrets: { [PROVIDER]: SECRET } },
  );
  const bareRoute = TWILIO
    ? defineRoute({
        method: 'post',
        path: `/bench${TWILIO_CALL_ROUTE}/status`,
        access: { public: true },
        summary: 'Bench only: the Twilio status callback route without signature check and database.',
        params: z.object({ connectionId: z.string(), attemptId: z.string() }),
        body: twilioStatusCallbackSchema,
        bodyMediaType: FORM_MEDIA_TYPE,
        responses: twilioRoutes[0]!.responses,
        handler: async () => ({ status: 200, body: { received: true as const, applied: false } }),
      })
    : defineRoute({
        method: 'post',
        path: '/bench/telephony/{provider}/events',
        access: { public: true },
        summary: 'Bench only: the event route without signature check and database.',
        params: z.object({ provider: z.string() }),
        body: callEventSchema,
        responses: telephonyEventRoutes[0]!.responses,
        handler: async () => ({ status: 200, body: { received: true as const, applied: false } }),
      });
  const app = express();
  registerRoutes(app, [bareRoute], services);
  app.use(createApp(services));
  await new Promise<void>((resolve) => app.listen(port, '127.0.0.1', () => resolve()));
  const twilioPath = `/telephony/twilio/${connectionId}/calls/{attemptId}/status`;
  const targets = TWILIO
    ? { bare: `${baseUrl}/bench${twilioPath}`, events: `${baseUrl}${twilioPath}` }
    : { bare: `${baseUrl}/bench/telephony/${PROVIDER}/events`, events: `${baseUrl}/telephony/${PROVIDER}/events` };

  type Run = LoadRun & { applied: number; callsUsed: number };
  let nextCall = 0;
  const load = async (variant: 'bare' | 'events', connections: number): Promise<Run> => {
    const first = variant === 'events' ? nextCall : 0;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        'bench/load-signed-events.ts',
        targets[variant],
        callsFile,
        String(first),
        String(connections),
        String(SECONDS),
      ],
      {
        cwd: projectRoot,
        env: { ...process.env, BENCH_SIGNING_SECRET: SECRET, BENCH_EVENT_FORMAT: TWILIO ? 'twilio' : 'simulated' },
      },
    );
    const run = JSON.parse(stdout) as Run;
    if (variant === 'events') nextCall += run.callsUsed;
    return run;
  };
  // The signed events are the webhook measured against the bare route.
  const measured = await webhookAgainstBare(CONCURRENCY, ROUNDS, (variant, connections) =>
    load(variant === 'webhook' ? 'events' : 'bare', connections),
  );
  const levels = measured.map(({ webhook, webhookOverBareRps, webhookCostP50Ms, runs, ...level }) => {
    const sent = runs.webhook.reduce((total, run) => total + run.requests, 0);
    const applied = runs.webhook.reduce((total, run) => total + run.applied, 0);
    return {
      ...level,
      events: webhook,
      eventsOverBareRps: webhookOverBareRps,
      eventCostP50Ms: webhookCostP50Ms,
      eventsAppliedShare: Number((applied / sent).toFixed(3)),
      runs: { bare: runs.bare, events: runs.webhook },
    };
  });
  // 4. The same events applied in this process, one at a time, without HTTP, signature or validation:
  // what the database transaction alone costs.
  const applyMs: number[] = [];
  for (let index = 0; index < APPLIED_IN_PROCESS; index++) {
    const { attemptId, providerCallId } = rows[(nextCall + index) % rows.length]!;
    const begin = performance.now();
    await applyCallEvent(prismaSql(db), PROVIDER, {
      eventId: `in-process:${index}`,
      providerCallId,
      attemptId,
      status: 'ringing',
      occurredAt: new Date().toISOString(),
    });
    applyMs.push(performance.now() - begin);
  }
  applyMs.sort((a, b) => a - b);
  const applyInProcess = {
    events: APPLIED_IN_PROCESS,
    p50Ms: Number(applyMs[Math.floor(applyMs.length / 2)]!.toFixed(3)),
    p99Ms: Number(applyMs[Math.min(applyMs.length - 1, Math.floor(applyMs.length * 0.99))]!.toFixed(3)),
  };
  console.error('applyCallEvent in process', applyInProcess);
  const recorded = await db.callEvent.count();

  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: {
      endpoint: TWILIO ? `POST ${TWILIO_CALL_ROUTE}/status` : `POST /telephony/${PROVIDER}/events`,
      bare: `POST /bench${TWILIO ? `${TWILIO_CALL_ROUTE}/status` : `/telephony/${PROVIDER}/events`} (same registration, schemas and body; no signature, no database)`,
      mix: TWILIO
        ? 'per call: ringing (SequenceNumber 1) then in-progress (2), on calls in status dialing; no terminal callbacks'
        : 'per call: ringing then in-progress, distinct eventIds, on calls in status dialing; no terminal events',
      secondsPerRun: SECONDS,
      rounds: ROUNDS,
      calls: CALLS,
      callsUsed: nextCall,
      eventsRecorded: recorded,
      signatureHeader: TWILIO ? 'X-Twilio-Signature' : SIGNATURE_HEADER,
    },
    signature,
    applyInProcess,
    levels,
  };
  const what = TWILIO
    ? `Twilio's status callbacks, ${result.setup.endpoint} through a twilio-twin connection (form-encoded; X-Twilio-Signature, HMAC-SHA1 over the public URL and the sorted form, checked with the connection's auth token: the connection as the API process keeps it opened (read at most every 5 s), the call found by attempt and connection in the statement that applies the callback; then one transaction: the call locked, the callback recorded once by CallSid and SequenceNumber, the call moved forward)`
    : `POST /telephony/${PROVIDER}/events (HMAC-SHA256 signature checked over the raw body, then one transaction: the call locked, the event recorded once by eventId, the call moved forward)`;
  writeBenchResults(RESULTS, result, [
    `# ${TWILIO ? 'Twilio status callbacks' : 'Carrier status events'} benchmark (${result.measuredAt})`,
    '',
    ...(process.env.BENCH_NOTE ? [`**${process.env.BENCH_NOTE}**`, ''] : []),
    `${what} against a bare POST route of the same app with the same body and schemas. Each call is sent ringing, then in-progress (${result.setup.mix}); ${CALLS} calls made first, ${nextCall} used. The load generator is its own process and signs every event. ${ROUNDS} alternating rounds of ${SECONDS} s per level; ${result.machine.cpus} CPUs shared by server, PostgreSQL and load generator (load average at the end ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}); Node ${process.version}. Medians.`,
    '',
    '| connections | route | events/s | p50 ms | p99 ms | errors |',
    '|-|-|-|-|-|-|',
    ...levels.flatMap((level) => [
      `| ${level.connections} | bare route | ${level.bare.rps} | ${level.bare.p50Ms} | ${level.bare.p99Ms} | ${level.bare.errors} |`,
      `| ${level.connections} | events (signed, applied) | ${level.events.rps} | ${level.events.p50Ms} | ${level.events.p99Ms} | ${level.events.errors} |`,
    ]),
    '',
    ...levels.map(
      (level) =>
        `- ${level.connections} connection(s): events keep ${(level.eventsOverBareRps * 100).toFixed(1)} % of the bare route's throughput (ratio ${level.eventsOverBareRps}); an event costs ${level.eventCostP50Ms} ms more at p50; ${(level.eventsAppliedShare * 100).toFixed(1)} % of the events moved their call (the rest crossed with the call's other event, or wrapped around onto used calls).`,
    ),
    `- The signature check alone, in process, on a ${signature.bodyBytes}-byte event: ${signature.verifyUs} µs per verify (${signature.signUs} µs per sign), over ${VERIFICATIONS} calls.`,
    `- applyCallEvent alone (the transaction the route runs: lock, record, move), in process, one at a time, ${applyInProcess.events} ringing events on unused calls: p50 ${applyInProcess.p50Ms} ms, p99 ${applyInProcess.p99Ms} ms (PostgreSQL durable: fsync at every commit).`,
    `- ${recorded} events recorded in CallEvent at the end.`,
    SECONDS < 8 || ROUNDS < 3
      ? '- A small-scale run on a shared machine (fewer or shorter rounds than the defaults); for the full figures run it on a quiet machine with the defaults (docs/benchmarks.md).'
      : '',
    '',
  ]);
  console.log(JSON.stringify(levels.map(({ runs: _runs, ...level }) => level)));
  await db.$disconnect();
  await close();
} finally {
  await bench.stop();
}
process.exit(0);
