// Load generator, run as its own process so it does not share the event loop of the server it measures.
// Usage: node --import tsx bench/load.ts <url> <file with one API key per line> <connections> <seconds>
// Requests cycle through the keys. Prints one JSON object: { requests, errors, rps, p50Ms, p90Ms, p99Ms }.
import { readFileSync } from 'node:fs';
import http from 'node:http';

const [url, keysFile, connectionsArg, secondsArg] = process.argv.slice(2);
const connections = Number(connectionsArg ?? 10);
const durationMs = Number(secondsArg ?? 10) * 1000;
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const authorizations = readFileSync(keysFile!, 'utf8')
  .trim()
  .split('\n')
  .map((key) => `Bearer ${key}`);
let next = 0;

function once(): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { authorization: authorizations[next++ % authorizations.length]! };
    const request = http.get(url!, { agent, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
  });
}

const latenciesUs: number[] = [];
let errors = 0;
const deadline = performance.now() + durationMs;
const started = performance.now();
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      const begin = process.hrtime.bigint();
      const status = await once();
      latenciesUs.push(Number(process.hrtime.bigint() - begin) / 1000);
      if (status !== 200) errors++;
    }
  }),
);
const elapsedS = (performance.now() - started) / 1000;
latenciesUs.sort((a, b) => a - b);
const percentile = (p: number) =>
  Number((latenciesUs[Math.min(latenciesUs.length - 1, Math.floor(latenciesUs.length * p))]! / 1000).toFixed(3));
console.log(
  JSON.stringify({
    requests: latenciesUs.length,
    errors,
    rps: Math.round(latenciesUs.length / elapsedS),
    p50Ms: percentile(0.5),
    p90Ms: percentile(0.9),
    p99Ms: percentile(0.99),
  }),
);
agent.destroy();
