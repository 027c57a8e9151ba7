import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });

const DAY_MS = 24 * 3600_000;

async function storeOf(workspace: TestWorkspace) {
  return db.crmConnection.create({
    data: { workspaceId: workspace.workspaceId, kind: 'shopify', shopDomain: 'example.myshopify.com', secret: 'S' },
  });
}

async function order(
  connection: { id: string; workspaceId: string },
  fields: {
    phone: string | null;
    name: string;
    daysAgo: number;
    financialStatus?: string;
    attributed?: boolean;
    cancelled?: boolean;
  },
) {
  await db.commerceOrder.create({
    data: {
      workspaceId: connection.workspaceId,
      connectionId: connection.id,
      externalOrderId: randomUUID(),
      orderNumber: `#${Math.floor(Math.random() * 100_000)}`,
      currency: 'USD',
      totalPrice: '20.00',
      financialStatus: fields.financialStatus ?? 'paid',
      fulfillmentStatus: 'unfulfilled',
      customerName: fields.name,
      customerPhone: fields.phone,
      placedAt: new Date(Date.now() - fields.daysAgo * DAY_MS),
      cancelledAt: fields.cancelled ? new Date() : null,
      attributedToService: fields.attributed ?? false,
    },
  });
}

/** A store with five customers: Ana twice (renamed on her latest order), Bo attributed, Cy pending, one phoneless, one cancelled. */
async function seededStore(workspace: TestWorkspace) {
  const connection = await storeOf(workspace);
  await order(connection, { phone: '+14155550101', name: 'Ana Old', daysAgo: 40 });
  await order(connection, { phone: '+14155550101', name: 'Ana Lima', daysAgo: 2 });
  await order(connection, { phone: '+14155550102', name: 'Bo', daysAgo: 10, attributed: true });
  await order(connection, { phone: '+14155550103', name: 'Cy', daysAgo: 50, financialStatus: 'pending' });
  await order(connection, { phone: null, name: 'No Phone', daysAgo: 1 });
  await order(connection, { phone: '+14155550104', name: 'Gone', daysAgo: 1, cancelled: true });
  return connection;
}

const draftCampaign = (workspace: TestWorkspace) =>
  db.campaign.create({ data: { workspaceId: workspace.workspaceId, name: 'Win-back' } });

const importInto = (workspace: TestWorkspace, campaignId: string, body: Record<string, unknown>) =>
  api.request('POST', `/campaigns/${campaignId}/import-from-crm`, { key: workspace.key, body });

/** The campaign's calling list in the order it was added: each contact's phone and name. */
async function listedPhones(campaignId: string) {
  const rows = await db.campaignContact.findMany({ where: { campaignId }, orderBy: { position: 'asc' } });
  const contacts = await db.contact.findMany({ where: { id: { in: rows.map((row) => row.contactId) } } });
  return rows.map((row) => {
    const contact = contacts.find((candidate) => candidate.id === row.contactId)!;
    return { phone: contact.phone, name: contact.name };
  });
}

describe('POST /campaigns/{id}/import-from-crm', () => {
  it("adds the connection's customers to a DRAFT campaign as POST /contacts does: one per phone, named as on the latest order", async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const connection = await seededStore(workspace);
    const campaign = await draftCampaign(workspace);
    const imported = await importInto(workspace, campaign.id, { connectionId: connection.id });
    expect(imported.status).toBe(200);
    expect(await imported.json()).toEqual({ added: 3, total: 3 });
    expect(await listedPhones(campaign.id)).toEqual([
      { phone: '+14155550103', name: 'Cy' },
      { phone: '+14155550101', name: 'Ana Lima' },
      { phone: '+14155550102', name: 'Bo' },
    ]);
    const ana = await db.contact.findFirstOrThrow({
      where: { workspaceId: workspace.workspaceId, phone: '+14155550101' },
    });
    expect(ana.metadata).toEqual({
      source: 'crm',
      connectionId: connection.id,
      orders: 2,
      lastOrderAt: expect.stringMatching(/Z$/),
    });
    const again = await importInto(workspace, campaign.id, { connectionId: connection.id });
    expect(await again.json()).toEqual({ added: 0, total: 3 });
  });

  it('filters: since, financialStatus, attributed; a phone already a workspace contact keeps its name', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const connection = await seededStore(workspace);
    const added = await api.request('POST', `/campaigns/${(await draftCampaign(workspace)).id}/contacts`, {
      key: workspace.key,
      body: { contacts: [{ phone: '+14155550101', name: 'Ana (known)' }] },
    });
    expect(added.status).toBe(200);
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ since: new Date(Date.now() - 30 * DAY_MS).toISOString() }, ['+14155550102', '+14155550101']],
      [{ financialStatus: 'pending' }, ['+14155550103']],
      [{ attributed: true }, ['+14155550102']],
      [{ attributed: false, financialStatus: 'paid' }, ['+14155550101']],
      [{ since: new Date().toISOString() }, []],
    ];
    for (const [filters, phones] of cases) {
      const campaign = await draftCampaign(workspace);
      const response = await importInto(workspace, campaign.id, { connectionId: connection.id, ...filters });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ added: phones.length, total: phones.length });
      expect((await listedPhones(campaign.id)).map((row) => row.phone)).toEqual(phones);
    }
    const ana = await db.contact.findFirstOrThrow({
      where: { workspaceId: workspace.workspaceId, phone: '+14155550101' },
    });
    expect(ana.name).toBe('Ana (known)');
  });

  it('refuses a campaign that is not DRAFT (409 campaign_not_draft), as POST /contacts does; nothing is added', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const connection = await seededStore(workspace);
    for (const status of ['RUNNING', 'PAUSED', 'STOPPED'] as const) {
      const campaign = await db.campaign.create({ data: { workspaceId: workspace.workspaceId, name: status, status } });
      const refused = await importInto(workspace, campaign.id, { connectionId: connection.id });
      expect(refused.status).toBe(409);
      expect(await refused.json()).toEqual({ error: 'campaign_not_draft', status });
      const contacts = await api.request('POST', `/campaigns/${campaign.id}/contacts`, {
        key: workspace.key,
        body: { contacts: [{ phone: '+14155550101' }] },
      });
      expect(await contacts.json()).toEqual({ error: 'campaign_not_draft', status });
      expect(await db.campaignContact.count({ where: { campaignId: campaign.id } })).toBe(0);
    }
  });

  it("scopes and workspaces: a key needs campaigns.edit (crm.edit is not enough); another workspace's campaign is 403, its connection 400", async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const connection = await seededStore(workspace);
    const campaign = await draftCampaign(workspace);
    const crmOnly = await createTestWorkspace(db, { scopes: ['crm.edit', 'campaigns.view'] });
    const crmCampaign = await draftCampaign(crmOnly);
    const refused = await importInto(crmOnly, crmCampaign.id, { connectionId: (await storeOf(crmOnly)).id });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'forbidden', requiredPermission: 'campaigns.edit' });

    const other = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const otherConnection = await seededStore(other);
    const foreignCampaign = await importInto(workspace, crmCampaign.id, { connectionId: connection.id });
    expect(foreignCampaign.status).toBe(403);
    expect(await foreignCampaign.json()).toEqual({ error: 'forbidden' });
    for (const connectionId of [otherConnection.id, randomUUID(), 'nope']) {
      const foreignConnection = await importInto(workspace, campaign.id, { connectionId });
      expect(foreignConnection.status).toBe(400);
      const answer = (await foreignConnection.json()) as { error: string; issues: Array<{ path: unknown[] }> };
      expect(answer.error).toBe('invalid_body');
      expect(answer.issues.map((issue) => issue.path.join('.'))).toEqual(['connectionId']);
    }
    await db.crmConnection.update({ where: { id: connection.id }, data: { deletedAt: new Date() } });
    expect((await importInto(workspace, campaign.id, { connectionId: connection.id })).status).toBe(400);
    const badFilter = await importInto(workspace, campaign.id, { connectionId: connection.id, since: 'yesterday' });
    expect(badFilter.status).toBe(400);
    expect(await db.campaignContact.count({ where: { campaignId: campaign.id } })).toBe(0);
  });
});
