import { describe, expect, it } from 'vitest';
import { connectCrm, crmWebhookPath } from '../../lib/crm/connections';
import { shopifyOrderPayload, signedShopifyWebhook } from '../../simulators/shopify-twin/shopify-orders';
import { verifyShopifySignature } from '../../lib/crm/shopify-webhook';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startReceiver } from '../support/http-receiver';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { execTestProcess } from '../support/processes';
import { TEST_KEYRING } from '../support/keyring';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(await startTestCarrier(db), api) });

const simulator = (args: string[]) =>
  execTestProcess(process.execPath, ['--import', 'tsx', 'simulators/shopify-twin/main.ts', ...args], {
    cwd: process.cwd(),
  });

interface Summary {
  sent: number;
  accepted: number;
  attributed: number;
  statuses: Record<string, number>;
  orders: Array<{ orderNumber: string; phone: string; attributed: boolean; status: number }>;
}

describe('the store simulator', () => {
  it('builds orders the receiver verifies, with every Shopify header', () => {
    const webhook = signedShopifyWebhook({
      payload: shopifyOrderPayload({ seq: 3, phone: '+14155550123', attributedCampaignId: 'c' }),
      shop: 'example.myshopify.com',
      secret: 'S',
    });
    expect(verifyShopifySignature(webhook.body, webhook.headers['x-shopify-hmac-sha256'], 'S')).toBe(true);
    expect(verifyShopifySignature(webhook.body, webhook.headers['x-shopify-hmac-sha256'], 'T')).toBe(false);
    expect(Object.keys(webhook.headers).sort()).toEqual(
      [
        'content-type',
        'x-shopify-api-version',
        'x-shopify-event-id',
        'x-shopify-hmac-sha256',
        'x-shopify-shop-domain',
        'x-shopify-topic',
        'x-shopify-triggered-at',
        'x-shopify-webhook-id',
      ].sort(),
    );
    const payload = JSON.parse(webhook.body) as { landing_site: string; total_price: string; line_items: unknown[] };
    expect(payload.landing_site).toMatch(/\?utm_source=outbound-ai&utm_medium=whatsapp&utm_campaign=c$/);
    expect(payload.line_items).toHaveLength(2);
    expect(payload.total_price).toBe('91.84'); // 41.00 + 34.90, and 21% tax
  });

  it('sends signed orders to a running stack: stored, half of them attributed to the campaign', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['sales.view'] });
    const campaign = await db.campaign.create({ data: { workspaceId: workspace.workspaceId, name: 'Launch' } });
    const shop = `sim-${Date.now().toString(36)}.myshopify.com`;
    const { id } = await connectCrm(db, TEST_KEYRING, {
      workspaceId: workspace.workspaceId,
      kind: 'shopify',
      shopDomain: shop,
      secret: 'S3',
    });
    const { stdout } = await simulator([
      '--url',
      `${api.baseUrl}${crmWebhookPath(id)}`,
      '--shop',
      shop,
      '--secret',
      'S3',
      '--orders',
      '6',
      '--attributed-campaign',
      campaign.id,
      '--phones',
      '+14155550101,+14155550102',
    ]);
    const summary = JSON.parse(stdout) as Summary;
    expect(summary).toMatchObject({ sent: 6, accepted: 6, attributed: 3, statuses: { 200: 6 } });
    const orders = await until(
      () => db.commerceOrder.findMany({ where: { connectionId: id } }),
      (rows) => rows.length === 6,
    );
    expect(orders.filter((order) => order.attributedCampaignId === campaign.id)).toHaveLength(3);
    expect(orders.filter((order) => order.attributedToService && order.utmSource === 'outbound-ai')).toHaveLength(3);
    expect(new Set(orders.map((order) => order.customerPhone))).toEqual(new Set(['+14155550101', '+14155550102']));
  });

  it('reports what the receiver refused (a wrong secret: 401) and exits 1', async () => {
    const receiver = await startReceiver(() => 401);
    const failed = await simulator([
      '--url',
      receiver.url,
      '--shop',
      'x.myshopify.com',
      '--secret',
      'S',
      '--orders',
      '2',
    ]).catch((error: { code: number; stdout: string }) => error);
    expect('code' in failed && failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ sent: 2, accepted: 0, statuses: { 401: 2 } });
    expect(receiver.received[0]!.headers['x-shopify-topic']).toBe('orders/create');
  });
});
