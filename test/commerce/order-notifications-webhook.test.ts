import { describe, expect, it } from 'vitest';
import { connectCrm } from '../../lib/crm/connections';
import {
  postShopifyWebhook,
  shopifyOrderPayload,
  signedShopifyWebhook,
} from '../../simulators/shopify-twin/shopify-orders';
import { grantCredits } from '../../lib/door/workspace-admin';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { connectedSender, reviewedTemplate, startWhatsAppStack } from '../support/whatsapp-stack';
import { createTestWorkspace } from '../support/workspace';
import { TEST_KEYRING } from '../support/keyring';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const { api } = await startWhatsAppStack(db, url, temporal);

describe('a store order arriving by webhook', () => {
  it("is notified by its connection's enabled rule through the WhatsApp channel, once, and billed", async () => {
    const workspace = await createTestWorkspace(db, {
      scopes: ['crm.edit', 'crm.view', 'whatsapp.edit', 'billing.view'],
    });
    await grantCredits(db, workspace.workspaceId, 1);
    await connectedSender(db, workspace, '+14155558001');
    const template = await reviewedTemplate(api, workspace, {
      name: 'order_thanks',
      body: 'Thanks {{1}}! Order {{2}} ({{3}}) is confirmed.',
    });
    expect(template.status).toBe('APPROVED');
    const shop = 'bright-notify.myshopify.com';
    const secret = 'shpss_order_notifications_test';
    const { id: connectionId } = await connectCrm(db, TEST_KEYRING, {
      workspaceId: workspace.workspaceId,
      kind: 'shopify',
      shopDomain: shop,
      secret,
    });
    const rules = await api.request('PUT', `/crm/connections/${connectionId}/order-notifications`, {
      key: workspace.key,
      body: {
        rules: [
          { templateId: template.id, presetId: 'order_basic', enabled: true, delayMinutes: 0 },
          { templateId: template.id, presetId: 'order_basic', enabled: false, delayMinutes: 0 },
        ],
      },
    });
    expect(rules.status).toBe(200);
    const webhook = signedShopifyWebhook({
      payload: shopifyOrderPayload({ seq: 7, phone: '+14155558101' }), // the simulated provider: read
      shop,
      secret,
    });
    const receiver = `${api.baseUrl}/crm/connections/${connectionId}/webhooks`;
    expect(await postShopifyWebhook(receiver, webhook)).toBe(200);
    // The same delivery again (Shopify retries): nothing twice.
    expect(await postShopifyWebhook(receiver, webhook)).toBe(200);
    const message = await until(
      () => db.whatsAppMessage.findFirst({ where: { workspaceId: workspace.workspaceId } }),
      (row) => row?.status === 'read',
    );
    const order = await db.commerceOrder.findFirstOrThrow({ where: { connectionId } });
    expect(message!.body).toMatch(new RegExp(`^Thanks .+! Order ${order.orderNumber.replace('#', '#?')} \\(`));
    expect(message!.idempotencyKey).toMatch(new RegExp(`^order:[0-9a-f-]{36}:${order.id}$`));
    expect(await db.whatsAppMessage.count({ where: { workspaceId: workspace.workspaceId } })).toBe(1);
    const balance = await api.request('GET', '/credits/balance', { key: workspace.key });
    expect(await balance.json()).toEqual({ balance: '0.9800', pendingHolds: '0.0000' });
    const delivery = await db.crmWebhookDelivery.findFirstOrThrow({ where: { connectionId } });
    expect(delivery).toMatchObject({ status: 'processed', payload: null });
  });
});
