import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { addMember, createWorkspace } from '../../lib/door/workspace-admin';
import { connectCrm } from '../../lib/crm/connections';
import { setCrmAdminToken } from '../../lib/crm/admin-token';
import type { Database } from '../../lib/database';
import type { Keyring } from '../../lib/secrets/keyring';
import { startCrmImportWorkflow } from '../../lib/temporal/crm';
import { crmImportWorkflowId } from '../../lib/temporal/workflow-ids';

/** The store twin the recording runs (scripts/record-histories.ts): one shop, its token, a small cost bucket. */
export interface StoreTwinContext {
  twinUrl: string;
  keyring: Keyring;
  shopDomain: string;
  accessToken: string;
}

interface CrmImportScenarioContext {
  db: Database;
  client: Client;
  taskQueue: string;
  store?: StoreTwinContext;
}

/**
 * A store connection with an Admin API token on the store twin, its customers imported into a DRAFT campaign by
 * crmImportWorkflow: three pages of 10, a durable wait for the cost bucket between them, the import completed.
 */
export const crmImportScenario = {
  name: 'crm-import-shopify-customers',
  async run({ db, client, taskQueue, store }: CrmImportScenarioContext): Promise<string> {
    if (!store) throw new Error('the crm import scenario needs the store twin');
    const { id: workspaceId } = await createWorkspace(db, 'Replay store import', {});
    await addMember(db, workspaceId, 'store-import@replay.localhost', 'owner');
    const campaign = await db.campaign.create({ data: { workspaceId, name: 'Store customers' } });
    const { id: connectionId } = await connectCrm(db, store.keyring, {
      workspaceId,
      kind: 'shopify',
      shopDomain: store.shopDomain,
      secret: 'shpss_replay',
    });
    await setCrmAdminToken(db, store.keyring, {
      connectionId,
      token: store.accessToken,
      provider: 'shopify-twin',
      baseUrl: store.twinUrl,
    });
    const importId = randomUUID();
    await db.crmImport.create({
      data: { id: importId, workspaceId, campaignId: campaign.id, connectionId, provider: 'shopify-twin' },
    });
    await startCrmImportWorkflow(client, taskQueue, importId, { campaignId: campaign.id, workspaceId });
    await client.workflow.getHandle(crmImportWorkflowId(importId)).result();
    return crmImportWorkflowId(importId);
  },
};
