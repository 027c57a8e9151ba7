import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { connectCrm } from '../../lib/crm/connections';
import { setCrmAdminToken } from '../../lib/crm/admin-token';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { startCrmImportWorkflow } from '../../lib/temporal/crm';
import { crmImportWorkflowId } from '../../lib/temporal/workflow-ids';
import { createStoreAdminTwin, twinCustomers } from '../../simulators/shopify-twin/admin-twin';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';

// The import's rules on an in-process worker: pages of 10, an import listing at most 25 customers.
const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const keyring = keyringSchema.parse(newKeyringEntry('k1'));
await startTestWorker(temporal.taskQueue, {
  db,
  ...carrierDependencies(await startTestCarrier(db), api),
  secretsKeyring: keyring,
  crmImportPageSize: 10,
  crmImportMaxImported: 25,
});
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view'] });
const TOKEN = 'shpat_rules_test_token';
const shops = ['a', 'b', 'c'].map((letter) => ({
  shopDomain: `rules-${letter}.myshopify.com`,
  accessToken: `${TOKEN}_${letter}`,
  customers: twinCustomers(60),
}));
const twin = createStoreAdminTwin({ shops, bucketSize: 10_000, restoreRate: 10_000 });
const twinUrl = await twin.listen();
afterAll(() => twin.close());

async function importOf(shop: (typeof shops)[number], campaign: { status?: 'DRAFT' | 'RUNNING' }, token?: string) {
  const { id: connectionId } = await connectCrm(db, keyring, {
    workspaceId: owner.workspaceId,
    kind: 'shopify',
    shopDomain: shop.shopDomain,
    secret: 'S',
  });
  await setCrmAdminToken(db, keyring, {
    connectionId,
    token: token ?? shop.accessToken,
    provider: 'shopify-twin',
    baseUrl: twinUrl,
  });
  const { id: campaignId } = await db.campaign.create({
    data: { workspaceId: owner.workspaceId, name: shop.shopDomain, status: campaign.status ?? 'DRAFT' },
  });
  const importId = randomUUID();
  await db.crmImport.create({
    data: { id: importId, workspaceId: owner.workspaceId, campaignId, connectionId, provider: 'shopify-twin' },
  });
  await startCrmImportWorkflow(temporal.client, temporal.taskQueue, importId, {
    campaignId,
    workspaceId: owner.workspaceId,
  });
  const result = await temporal.client.workflow.getHandle(crmImportWorkflowId(importId)).result();
  return { result, row: await db.crmImport.findUniqueOrThrow({ where: { id: importId } }), campaignId };
}

describe('an Admin API import', () => {
  it('lists at most its limit of customers and counts the others as limit_reached, reading the store to the end', async () => {
    const { result, row, campaignId } = await importOf(shops[0]!, {});
    expect(result).toEqual({ status: 'completed' });
    // Pages of 10: 10, 2 (+1 duplicate), 10, 2 (+1 duplicate), then 1 of 10 and none of the last page's 2 and 1.
    expect(row).toMatchObject({ pages: 6, customersRead: 60, imported: 25 });
    expect(row.skipped).toMatchObject({ limit_reached: 12, duplicate: 2 });
    expect(await db.campaignContact.count({ where: { campaignId } })).toBe(25);
  });

  it('fails at once, with why, when the store refuses the token', async () => {
    const { result, row, campaignId } = await importOf(shops[1]!, {}, 'shpat_revoked_token');
    expect(result).toEqual({ status: 'failed' });
    expect(row.status).toBe('failed');
    expect(row.error).toContain('refused the Admin API access token (HTTP 401)');
    expect(row.error).not.toContain('shpat_revoked_token');
    expect(await db.campaignContact.count({ where: { campaignId } })).toBe(0);
  });

  it('fails, listing nobody, when the campaign is no longer DRAFT', async () => {
    const { result, row, campaignId } = await importOf(shops[2]!, { status: 'RUNNING' });
    expect(result).toEqual({ status: 'failed' });
    expect(row.error).toMatch(/^campaign_not_draft: the campaign is RUNNING/);
    expect(await db.campaignContact.count({ where: { campaignId } })).toBe(0);
  });
});
