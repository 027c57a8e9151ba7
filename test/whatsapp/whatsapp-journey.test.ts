import { describe, expect, it } from 'vitest';
import { grantCredits } from '../../lib/door/workspace-admin';
import { useTestDatabase } from '../support/database';
import { journey, runningJourneyCampaign } from '../support/journeys';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { connectedSender, reviewedTemplate, startWhatsAppStack } from '../support/whatsapp-stack';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const { api } = await startWhatsAppStack(db, url, temporal);

/** A journey that messages the lead with `templateName` and ends, whatever the node answered. */
const messaging = (templateName: string) =>
  journey(
    [
      { id: 'start', type: 'start', data: { fields: [{ name: 'order', type: 'string' }] } },
      {
        id: 'notify',
        type: 'whatsapp',
        data: { templateName, language: 'en_US', parameters: ['{{start.name}}', '{{start.fields.order}}'] },
      },
      { id: 'end', type: 'end' },
    ],
    [
      ['start', 'notify'],
      ['notify', 'end'],
    ],
  );

async function runOf(campaignId: string, workspaceKey: string, phone: string) {
  const pushed = await api.request('POST', `/v1/campaigns/${campaignId}/leads`, {
    key: workspaceKey,
    body: { idempotencyKey: `lead-${phone}`, lead: { phone, name: 'Ana', fields: { order: 'A-17' } } },
  });
  expect(pushed.status).toBe(202);
  const { leadId } = (await pushed.json()) as { leadId: string };
  return until(
    () => db.journeyRun.findUnique({ where: { id: leadId } }),
    (run) => run?.status === 'completed',
  );
}

describe("a journey's whatsapp node", () => {
  it('sends on the WhatsApp channel: the workspace sender, the approved template, billed when delivered', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'whatsapp.edit', 'billing.view'] });
    await grantCredits(db, workspace.workspaceId, 1);
    const sender = await connectedSender(db, workspace, '+14155556001');
    const template = await reviewedTemplate(api, workspace, {
      name: 'order_ready',
      body: 'Hi {{1}}, order {{2}} is ready.',
    });
    expect(template.status).toBe('APPROVED');
    const { campaign } = await runningJourneyCampaign(db, workspace.workspaceId, messaging('order_ready'));
    const run = await runOf(campaign.id, workspace.key, '+14155556101');
    const output = (run!.variables as Record<string, { messageId: string; status: string }>).notify!;
    expect(output.status).toBe('sent');
    const message = await until(
      () => db.whatsAppMessage.findUniqueOrThrow({ where: { id: output.messageId } }),
      (row) => row.status === 'read',
    );
    expect(message).toMatchObject({
      senderId: sender.id,
      templateId: template.id,
      body: 'Hi Ana, order A-17 is ready.',
      journeyRunId: run!.id,
      campaignId: campaign.id,
      leadId: run!.id,
    });
    const balance = await api.request('GET', '/credits/balance', { key: workspace.key });
    expect(await balance.json()).toEqual({ balance: '0.9800', pendingHolds: '0.0000' });
  });

  it('answers failed and goes on when no approved template has the name: nothing is sent or charged', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'whatsapp.edit'] });
    await grantCredits(db, workspace.workspaceId, 1);
    await connectedSender(db, workspace, '+14155556002');
    const { campaign } = await runningJourneyCampaign(db, workspace.workspaceId, messaging('no_such_template'));
    const run = await runOf(campaign.id, workspace.key, '+14155556102');
    expect((run!.variables as Record<string, { status: string }>).notify).toEqual({ messageId: '', status: 'failed' });
    expect(await db.whatsAppMessage.count({ where: { workspaceId: workspace.workspaceId } })).toBe(0);
    expect(await db.creditLedgerEntry.count({ where: { workspaceId: workspace.workspaceId } })).toBe(1);
  });
});
