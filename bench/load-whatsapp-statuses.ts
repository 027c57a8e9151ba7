// Load generator of WhatsApp status webhooks, run as its own process (as bench/load.ts) so it does not
// share the event loop of the server it measures; it signs every body as the provider does
// (X-Hub-Signature-256, the HMAC is the load's CPU, not the server's).
// Usage: node --import tsx bench/load-whatsapp-statuses.ts <webhook url> <messages file> <first message> <connections> <seconds>
// The messages file is JSON: { phoneNumberId, businessAccountId, messages: [[wamid, recipient], ...] }.
// Each connection takes the next message (first + n, wrapping around) and reports it sent, delivered,
// then read, one Meta-shaped body per status, one status after the other's answer: a message's statuses
// never cross, so every one of them moves its message. BENCH_WHATSAPP_APP_SECRET is the app secret.
// Prints one JSON object: { requests, errors, rps, p50Ms, p90Ms, p99Ms, applied, messagesUsed, statusesSent }.
import { readFileSync } from 'node:fs';
import { createJsonHttp } from '../lib/http/json-http';
import { signWhatsAppWebhook, WHATSAPP_SIGNATURE_HEADER } from '../lib/whatsapp/webhook';
import { runLoad } from './load-loop';
import { statusWebhook } from './whatsapp-status-webhook';

const STATUS_ORDER = ['sent', 'delivered', 'read'] as const;

const [url, messagesFile, firstArg, connectionsArg, secondsArg] = process.argv.slice(2);
const appSecret = process.env.BENCH_WHATSAPP_APP_SECRET!;
const first = Number(firstArg ?? 0);
const connections = Number(connectionsArg ?? 10);
const { phoneNumberId, businessAccountId, messages } = JSON.parse(readFileSync(messagesFile!, 'utf8')) as {
  phoneNumberId: string;
  businessAccountId: string;
  messages: Array<[string, string]>;
};
const client = createJsonHttp({ sockets: connections });
/** Per connection: the message it reports (an index from `first`) and its next status. */
const cursors = Array.from({ length: connections }, () => ({ message: -1, step: STATUS_ORDER.length }));
let taken = 0;
let applied = 0;

async function once(connection: number): Promise<number> {
  const cursor = cursors[connection]!;
  if (cursor.step === STATUS_ORDER.length) Object.assign(cursor, { message: taken++, step: 0 });
  const [id, recipient] = messages[(first + cursor.message) % messages.length]!;
  const status = STATUS_ORDER[cursor.step++]!;
  const body = JSON.stringify(statusWebhook({ phoneNumberId, businessAccountId }, { wamid: id, recipient }, status));
  const response = await client.request('POST', url!, {
    rawBody: body,
    headers: { [WHATSAPP_SIGNATURE_HEADER]: signWhatsAppWebhook(body, appSecret) },
  });
  if (response.status === 200) applied += (JSON.parse(response.text) as { applied: number }).applied;
  return response.status;
}

const result = await runLoad(once, connections, Number(secondsArg ?? 10) * 1000);
console.log(JSON.stringify({ ...result, applied, messagesUsed: taken, statusesSent: result.requests }));
client.close();
