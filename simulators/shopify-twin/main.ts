import { parseArgs } from 'node:util';
import { postShopifyWebhook, shopifyOrderPayload, signedShopifyWebhook } from './shopify-orders';
import { handleStopSignals } from '../../lib/shutdown';
import { twinProcessSettingsOrExit } from '../twin-common/config';

/*
 * A Shopify store sending orders/create webhooks to a connection's receiver
 * (docs/features/commerce.md#the-store-simulator), for demos, tests and the bench:
 *
 *   npm run -s store-simulator -- --url <webhookUrl> --shop example.myshopify.com --secret S
 *     [--orders N (default 5)] [--attributed-campaign ID] [--phones +14155550101,+14155550102]
 *     [--concurrency C (default 4)]
 *
 * --url and --secret are what `npm run -s admin -- crm connect` printed and was given. Each order is a
 * realistic REST Order payload, signed with the secret (X-Shopify-Hmac-Sha256) and sent with Shopify's
 * headers (topic, shop, event id, webhook id, API version). With --attributed-campaign, every other order
 * (the 1st, 3rd, ...) carries the campaign in its landing site's UTM parameters (utm_source=outbound-ai).
 * Phones are given round-robin from --phones; without it, every order gets a phone of its own
 * (+1415555 then 4 digits). Prints a JSON summary: what was sent and how the receiver answered.
 * Exits 1 when any delivery was not answered 2xx.
 *
 * SIGTERM or SIGINT stops it (docs/operations-stopping.md): no further order is sent, those in flight are
 * waited for, and the summary says `"stopped": true`; SHUTDOWN_GRACE_MS bounds the wait (then exit 70).
 */

const USAGE =
  'usage: store-simulator --url <webhookUrl> --shop <name>.myshopify.com --secret <secret> [--orders N] [--attributed-campaign ID] [--phones +1...,+1...] [--concurrency C]';

function options() {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      shop: { type: 'string' },
      secret: { type: 'string' },
      orders: { type: 'string', default: '5' },
      'attributed-campaign': { type: 'string' },
      phones: { type: 'string' },
      concurrency: { type: 'string', default: '4' },
    },
  });
  const orders = Number(values.orders);
  const concurrency = Number(values.concurrency);
  if (!values.url || !values.shop || !values.secret) throw new Error(USAGE);
  if (!Number.isInteger(orders) || orders < 1) throw new Error('--orders must be a positive integer');
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('--concurrency must be a positive integer');
  const phones = values.phones
    ?.split(',')
    .map((phone) => phone.trim())
    .filter(Boolean);
  return {
    url: values.url,
    shop: values.shop,
    secret: values.secret,
    orders,
    concurrency,
    campaignId: values['attributed-campaign'] ?? null,
    phones: phones?.length ? phones : null,
  };
}

const stop = handleStopSignals({ graceMs: twinProcessSettingsOrExit().SHUTDOWN_GRACE_MS });

async function main() {
  const settings = options();
  const seqBase = Date.now() % 1_000_000_000;
  const statuses: Record<string, number> = {};
  const sent: Array<{ orderNumber: string; phone: string; attributed: boolean; eventId: string; status: number }> = [];
  const startedAt = Date.now();
  let next = 0;
  async function sender() {
    for (let index = next++; index < settings.orders && !stop.stopping; index = next++) {
      const phone = settings.phones
        ? settings.phones[index % settings.phones.length]!
        : `+1415555${String(1000 + ((seqBase + index) % 9000)).padStart(4, '0')}`;
      const attributed = settings.campaignId !== null && index % 2 === 0;
      const payload = shopifyOrderPayload({
        seq: seqBase + index,
        phone,
        attributedCampaignId: attributed ? settings.campaignId : null,
      });
      const webhook = signedShopifyWebhook({ payload, shop: settings.shop, secret: settings.secret });
      const status = await postShopifyWebhook(settings.url, webhook).catch(() => 0);
      statuses[status] = (statuses[status] ?? 0) + 1;
      sent.push({ orderNumber: payload.name, phone, attributed, eventId: webhook.eventId, status });
    }
  }
  // On a stop signal the senders take no further order.
  await Promise.all(Array.from({ length: Math.min(settings.concurrency, settings.orders) }, sender));
  const accepted = sent.filter((order) => order.status >= 200 && order.status < 300).length;
  console.log(
    JSON.stringify(
      {
        url: settings.url,
        shop: settings.shop,
        sent: sent.length,
        accepted,
        attributed: sent.filter((order) => order.attributed).length,
        statuses,
        stopped: stop.stopping,
        durationMs: Date.now() - startedAt,
        orders: sent,
      },
      null,
      2,
    ),
  );
  if (accepted !== sent.length || sent.length < settings.orders) process.exitCode = 1;
}

const run = main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 2;
});
// A stop signal waits for the orders in flight and the summary; its exit code is the summary's.
stop.defer('orders in flight', () => run);
void run.then(() => stop.stop('every order sent'));
