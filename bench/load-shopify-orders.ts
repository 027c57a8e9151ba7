// Load generator of Shopify orders/create webhooks, run as its own process (as bench/load.ts) so it does
// not share the event loop of the server it measures; it signs every body as Shopify does
// (simulators/shopify-twin/shopify-orders.ts: X-Shopify-Hmac-Sha256 with the connection's secret, a fresh
// X-Shopify-Event-Id each), the HMAC being the load's CPU, not the server's.
// Usage: node --import tsx bench/load-shopify-orders.ts <receiver url> <shop domain> <first seq> <connections> <seconds>
// Each request is the next order (seq first, first + 1, ...: a new order id each). BENCH_SHOPIFY_SECRET is
// the connection's secret.
// Prints one JSON object: { requests, errors, rps, p50Ms, p90Ms, p99Ms, ordersSent, answeredAt }, where
// answeredAt lists [seq, epoch ms at which its 200 answer arrived] (the start of its time to queryable).
import { createJsonHttp } from '../lib/http/json-http';
import { shopifyOrderPayload, signedShopifyWebhook } from '../simulators/shopify-twin/shopify-orders';
import { runLoad } from './load-loop';

const [url, shop, firstArg, connectionsArg, secondsArg] = process.argv.slice(2);
const secret = process.env.BENCH_SHOPIFY_SECRET!;
const first = Number(firstArg ?? 0);
const connections = Number(connectionsArg ?? 10);
const client = createJsonHttp({ sockets: connections });
const answeredAt: Array<[number, number]> = [];
let taken = 0;

async function once(): Promise<number> {
  const seq = first + taken++;
  const webhook = signedShopifyWebhook({
    payload: shopifyOrderPayload({ seq, phone: `+1415${String(seq % 10_000_000).padStart(7, '0')}` }),
    shop: shop!,
    secret,
  });
  const response = await client.request('POST', url!, { rawBody: webhook.body, headers: webhook.headers });
  if (response.status === 200) answeredAt.push([seq, Date.now()]);
  return response.status;
}

const result = await runLoad(once, connections, Number(secondsArg ?? 10) * 1000);
console.log(JSON.stringify({ ...result, ordersSent: taken, answeredAt }));
client.close();
