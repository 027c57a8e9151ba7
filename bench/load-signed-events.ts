// Load generator of carrier status events, run as its own process (as bench/load.ts) so it does not
// share the event loop of the server it measures; it signs every event as a carrier does (the HMAC is
// the load's CPU, not the server's).
// Usage: node --import tsx bench/load-signed-events.ts <events url> <calls file> <first call> <connections> <seconds>
// The calls file has one "<attemptId> <providerCallId>" per line. Request k reports call
// (first + floor(k / 2)) % calls: ringing, then in-progress, each with an eventId of its own.
// BENCH_SIGNING_SECRET is the provider's secret. BENCH_EVENT_FORMAT=twilio: Twilio's status callbacks instead, the url a
// template whose {attemptId} each request fills, the form signed X-Twilio-Signature with the secret as auth token over
// that very URL (the API's PUBLIC_BASE_URL is the URL the load calls). Prints one JSON object:
// { requests, errors, applied, appliedByStatus, callsUsed, rps, p50Ms, p90Ms, p99Ms }; appliedByStatus counts, per
// status sent, the events answered 200 and those of them applied (a ringing answered after its call's in-progress
// is not: the two are sent at once on two connections).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import twilio from 'twilio';
import { SIGNATURE_HEADER, signEvent } from '../lib/calls/signature';
import { TWILIO_SIGNATURE_HEADER } from '../lib/carriers/twilio/twilio-callbacks';
import { twilioStatusForm } from './twilio-callback-form';
import { runLoad } from './load-loop';

const [url, callsFile, firstArg, connectionsArg, secondsArg] = process.argv.slice(2);
const secret = process.env.BENCH_SIGNING_SECRET!;
const first = Number(firstArg ?? 0);
const connections = Number(connectionsArg ?? 10);
const calls = readFileSync(callsFile!, 'utf8')
  .trim()
  .split('\n')
  .map((line) => line.split(' ') as [string, string]);
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const run = randomUUID();
let next = 0;
let applied = 0;
const appliedByStatus: Record<string, { answered: number; applied: number }> = {
  ringing: { answered: 0, applied: 0 },
  'in-progress': { answered: 0, applied: 0 },
};

/** The carrier's request for event `index` of a call: its URL, body and headers, signed as the carrier signs. */
function eventRequest(index: number, attemptId: string, providerCallId: string, status: 'ringing' | 'in-progress') {
  if (process.env.BENCH_EVENT_FORMAT === 'twilio') {
    const target = url!.replace('{attemptId}', encodeURIComponent(attemptId));
    const form = twilioStatusForm(providerCallId, status, index % 2 ? 2 : 1);
    return {
      target,
      body: new URLSearchParams(form).toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        [TWILIO_SIGNATURE_HEADER]: twilio.getExpectedTwilioSignature(secret, target, form),
      },
    };
  }
  const body = JSON.stringify({
    eventId: `${run}:${index}`,
    providerCallId,
    attemptId,
    status,
    answeredBy: index % 2 ? 'human' : null,
    durationMs: null,
    reason: null,
    occurredAt: new Date().toISOString(),
  });
  return {
    target: url!,
    body,
    headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signEvent(secret, body) },
  };
}

function once(): Promise<number> {
  const index = next++;
  const [attemptId, providerCallId] = calls[(first + Math.floor(index / 2)) % calls.length]!;
  const status = index % 2 ? 'in-progress' : 'ringing';
  const { target, body, headers } = eventRequest(index, attemptId, providerCallId, status);
  return new Promise((resolve, reject) => {
    const request = http.request(
      target,
      {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          if (response.statusCode === 200) {
            appliedByStatus[status]!.answered++;
            if ((JSON.parse(Buffer.concat(chunks).toString()) as { applied: boolean }).applied) {
              applied++;
              appliedByStatus[status]!.applied++;
            }
          }
          resolve(response.statusCode ?? 0);
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const result = await runLoad(once, connections, Number(secondsArg ?? 10) * 1000);
console.log(JSON.stringify({ ...result, applied, appliedByStatus, callsUsed: Math.ceil(next / 2) }));
agent.destroy();
