// Load generator, run as its own process so it does not share the event loop of the server it measures.
// Usage: node --import tsx bench/load.ts <url> <file with one API key per line> <connections> <seconds>
// Requests cycle through the keys. Prints one JSON object: { requests, errors, rps, p50Ms, p90Ms, p99Ms }.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { runLoad } from './load-loop';

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

console.log(JSON.stringify(await runLoad(once, connections, durationMs)));
agent.destroy();
