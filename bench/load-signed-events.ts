// Load generator of carrier status events, run as its own process (as bench/load.ts) so it does not
// share the event loop of the server it measures; it signs every event as a carrier does (the HMAC is
// the load's CPU, not the server's).
// Usage: node --import tsx bench/load-signed-events.ts <events url> <calls file> <first call> <connections> <seconds>
// The calls file has one "<attemptId> <providerCallId>" per line. Request k reports call
// (first + floor(k / 2)) % calls: ringing, then in-progress, each with an eventId of its own.
// BENCH_SIGNING_SECRET is the provider's secret. Prints one JSON object:
// { requests, errors, applied, appliedByStatus, callsUsed, rps, p50Ms, p90Ms, p99Ms }; appliedByStatus counts, per
// status sent, the events answered 200 and those of them applied (a ringing answered after its call's in-progress
// is not: the two are sent at once on two connections).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { SIGNATURE_HEADER, signEvent } from '../lib/calls/signature';
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

function once(): Promise<number> {
  const index = next++;
  const [attemptId, providerCallId] = calls[(first + Math.floor(index / 2)) % calls.length]!;
  const status = index % 2 ? 'in-progress' : 'ringing';
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
  return new Promise((resolve, reject) => {
    const request = http.request(
      url!,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          [SIGNATURE_HEADER]: signEvent(secret, body),
        },
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
