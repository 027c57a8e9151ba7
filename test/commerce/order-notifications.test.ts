import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { bindActivities } from '../../activities/bind-activities';
import { prepareOrderNotification, scheduleOrderNotifications } from '../../activities/commerce/order-notifications';
import { orderNotificationWorkflowId } from '../../lib/temporal/workflow-ids';
import { grantCredits } from '../../lib/door/workspace-admin';
import type { OrderNotificationResult } from '../../lib/commerce/order-notification';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { insertPaidOrder } from '../support/commerce-orders';
import { useTestDatabase } from '../support/database';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { connectedSender, reviewedTemplate, startWhatsAppStack } from '../support/whatsapp-stack';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

/** A rule's delay minute lasts this long on this file's worker, so that a real durable timer fires within seconds. */
const MINUTE_MS = 1_000;

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const { api, whatsapp } = await startWhatsAppStack(db, url, temporal, { worker: false });
await startTestWorker(temporal.taskQueue, {
  db,
  ...carrierDependencies(await startTestCarrier(db), api),
  whatsappProvider: whatsapp.client,
  orderNotificationMinuteMs: MINUTE_MS,
});
const activities = bindActivities(
  { db, temporal: temporal.client },
  { scheduleOrderNotifications, prepareOrderNotification },
);

/** Phones ending in 1: the simulated provider delivers and reads their messages (its rules by last digit). */
let phoneCount = 0;
const nextPhone = () => `+1415555${7001 + 10 * phoneCount++}`;

async function connectionOf(workspace: TestWorkspace) {
  return db.crmConnection.create({
    data: { workspaceId: workspace.workspaceId, kind: 'shopify', shopDomain: 'example.myshopify.com', secret: 'S' },
  });
}

async function orderOf(
  connection: { id: string; workspaceId: string },
  fields: { customerPhone?: string | null; placedAt?: Date } = {},
) {
  const customerPhone = fields.customerPhone === undefined ? nextPhone() : fields.customerPhone;
  return insertPaidOrder(db, connection, { customerPhone, placedAt: fields.placedAt });
}

/** A workspace able to notify: credits, a connected sender, an APPROVED 3-variable template, a connection. */
async function notifyingWorkspace(scopes = ['crm.edit', 'whatsapp.edit', 'billing.view']) {
  const workspace = await createTestWorkspace(db, { scopes });
  await grantCredits(db, workspace.workspaceId, 1);
  const sender = await connectedSender(db, workspace, nextPhone());
  const template = await reviewedTemplate(api, workspace, {
    name: 'order_placed',
    body: 'Hi {{1}}, thanks for order {{2}} ({{3}}).',
  });
  expect(template.status).toBe('APPROVED');
  const connection = await connectionOf(workspace);
  return { workspace, sender, template, connection };
}

async function putRules(workspace: TestWorkspace, connectionId: string, rules: unknown[]) {
  return api.request('PUT', `/crm/connections/${connectionId}/order-notifications`, {
    key: workspace.key,
    body: { rules },
  });
}

const rule = (
  templateId: string,
  fields: Partial<{ enabled: boolean; delayMinutes: number; presetId: string }> = {},
) => ({
  templateId,
  presetId: 'order_basic',
  enabled: true,
  delayMinutes: 0,
  ...fields,
});

async function storedRules(workspace: TestWorkspace, connectionId: string, rules: unknown[]) {
  const response = await putRules(workspace, connectionId, rules);
  expect(response.status).toBe(200);
  return ((await response.json()) as { rules: Array<{ id: string }> }).rules;
}

async function startNotification(ruleId: string, orderId: string) {
  return temporal.client.workflow.start('orderNotificationWorkflow', {
    workflowId: orderNotificationWorkflowId(ruleId, orderId),
    taskQueue: temporal.taskQueue,
    args: [{ ruleId, orderId }],
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
}

const resultOf = (ruleId: string, orderId: string) =>
  temporal.client.workflow
    .getHandle(orderNotificationWorkflowId(ruleId, orderId))
    .result() as Promise<OrderNotificationResult>;

describe('PUT /crm/connections/{id}/order-notifications', () => {
  it('replaces the rules: new ids, the template status and purpose, the recent order volume', async () => {
    const { workspace, template, connection } = await notifyingWorkspace(['crm.edit', 'whatsapp.edit']);
    await orderOf(connection);
    await orderOf(connection, { placedAt: new Date(Date.now() - 29 * 24 * 3600_000) });
    await orderOf(connection, { placedAt: new Date(Date.now() - 31 * 24 * 3600_000) });
    const response = await putRules(workspace, connection.id, [
      rule(template.id),
      rule(template.id, { enabled: false, delayMinutes: 10_080, presetId: 'order_basic' }),
    ]);
    expect(response.status).toBe(200);
    const first = (await response.json()) as { rules: Array<Record<string, unknown>>; recentOrderVolume: number };
    expect(first.recentOrderVolume).toBe(2);
    expect(first.rules).toEqual([
      {
        id: expect.any(String),
        trigger: 'ORDER_PLACED',
        templateId: template.id,
        presetId: 'order_basic',
        enabled: true,
        delayMinutes: 0,
        templateStatus: 'APPROVED',
        templatePurpose: 'transactional',
      },
      expect.objectContaining({ enabled: false, delayMinutes: 10_080 }),
    ]);
    const again = await storedRules(workspace, connection.id, [rule(template.id, { delayMinutes: 5 })]);
    expect(again).toHaveLength(1);
    expect(first.rules.map((stored) => stored.id)).not.toContain(again[0]!.id);
    const read = await api.request('GET', `/crm/connections/${connection.id}/order-notifications`, {
      key: workspace.key,
    });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { rules: unknown[] }).rules).toEqual([
      expect.objectContaining({ id: again[0]!.id, delayMinutes: 5 }),
    ]);
    expect(await storedRules(workspace, connection.id, [])).toEqual([]);
  });

  it('holds at most 16 rules: 17 is 400 invalid_body and nothing changes', async () => {
    const { workspace, template, connection } = await notifyingWorkspace(['crm.edit', 'whatsapp.edit']);
    expect(
      await storedRules(
        workspace,
        connection.id,
        Array.from({ length: 16 }, () => rule(template.id)),
      ),
    ).toHaveLength(16);
    const refused = await putRules(
      workspace,
      connection.id,
      Array.from({ length: 17 }, () => rule(template.id)),
    );
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_body' });
    expect(await db.orderNotificationRule.count({ where: { connectionId: connection.id } })).toBe(16);
  });

  it('refuses a template of another workspace, an unknown preset, a preset too short, a negative or too long delay', async () => {
    const { workspace, template, connection } = await notifyingWorkspace(['crm.edit', 'whatsapp.edit']);
    const other = await notifyingWorkspace(['crm.edit', 'whatsapp.edit']);
    for (const [body, path] of [
      [rule(other.template.id), ['rules', 0, 'templateId']],
      [rule(template.id, { presetId: 'nope' }), ['rules', 0, 'presetId']],
      [rule(template.id, { presetId: 'order_number' }), ['rules', 0, 'presetId']],
      [rule(template.id, { delayMinutes: -1 }), ['rules', 0, 'delayMinutes']],
      [rule(template.id, { delayMinutes: 10_081 }), ['rules', 0, 'delayMinutes']],
      [rule(template.id, { delayMinutes: 1.5 }), ['rules', 0, 'delayMinutes']],
    ] as const) {
      const refused = await putRules(workspace, connection.id, [body]);
      expect(refused.status).toBe(400);
      const answer = (await refused.json()) as { error: string; issues: Array<{ path: unknown[] }> };
      expect(answer.error).toBe('invalid_body');
      expect(answer.issues.map((issue) => issue.path.join('.'))).toContain(path.join('.'));
    }
    expect(await db.orderNotificationRule.count({ where: { connectionId: connection.id } })).toBe(0);
  });

  it("scopes: crm.edit to replace, crm.view to read; another workspace's, an unknown or a removed connection: 403", async () => {
    const { workspace, template, connection } = await notifyingWorkspace(['crm.edit', 'whatsapp.edit']);
    const viewer = await createTestWorkspace(db, { scopes: ['crm.view'] });
    const viewerConnection = await connectionOf(viewer);
    const put = await putRules(viewer, viewerConnection.id, []);
    expect(put.status).toBe(403);
    expect(await put.json()).toEqual({ error: 'forbidden', requiredPermission: 'crm.edit' });
    const read = await api.request('GET', `/crm/connections/${viewerConnection.id}/order-notifications`, {
      key: viewer.key,
    });
    expect(read.status).toBe(200);
    const outsider = await createTestWorkspace(db, { scopes: ['whatsapp.edit'] });
    const unscoped = await api.request('GET', `/crm/connections/${viewerConnection.id}/order-notifications`, {
      key: outsider.key,
    });
    expect(await unscoped.json()).toEqual({ error: 'forbidden', requiredPermission: 'crm.view' });

    for (const id of [viewerConnection.id, randomUUID(), 'not-a-uuid']) {
      const foreign = await putRules(workspace, id, [rule(template.id)]);
      expect(foreign.status).toBe(403);
      expect(await foreign.json()).toEqual({ error: 'forbidden' });
    }
    await db.crmConnection.update({ where: { id: connection.id }, data: { deletedAt: new Date() } });
    expect((await putRules(workspace, connection.id, [])).status).toBe(403);
    expect(await db.orderNotificationRule.count({ where: { connectionId: viewerConnection.id } })).toBe(0);
  });
});

describe('order notifications', () => {
  it('a rule with no delay sends the template to the customer at once, billed when delivered', async () => {
    const { workspace, sender, template, connection } = await notifyingWorkspace();
    const [stored] = await storedRules(workspace, connection.id, [rule(template.id)]);
    const order = await orderOf(connection);
    const environment = new MockActivityEnvironment({ taskQueue: temporal.taskQueue });
    expect(await environment.run(activities.scheduleOrderNotifications, { orderId: order.id })).toEqual({
      ruleIds: [stored!.id],
    });
    const result = await resultOf(stored!.id, order.id);
    expect(result).toMatchObject({ status: 'handed_over' });
    const messageId = (result as { messageId: string }).messageId;
    const message = await until(
      () => db.whatsAppMessage.findUniqueOrThrow({ where: { id: messageId } }),
      (row) => row.status === 'read',
    );
    expect(message).toMatchObject({
      senderId: sender.id,
      templateId: template.id,
      body: 'Hi Ana Lima, thanks for order #1001 (49.90 EUR).',
      idempotencyKey: `order:${stored!.id}:${order.id}`,
    });
    const conversation = await db.whatsAppConversation.findUniqueOrThrow({ where: { id: message.conversationId } });
    expect(conversation.contactE164).toBe(order.customerPhone);
    const balance = await api.request('GET', '/credits/balance', { key: workspace.key });
    expect(await balance.json()).toEqual({ balance: '0.9800', pendingHolds: '0.0000' });
  });

  it('waits its delay on a durable timer before sending', async () => {
    const { workspace, template, connection } = await notifyingWorkspace();
    const [stored] = await storedRules(workspace, connection.id, [rule(template.id, { delayMinutes: 3 })]);
    const order = await orderOf(connection);
    const startedAt = Date.now();
    await startNotification(stored!.id, order.id);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await db.whatsAppMessage.count({ where: { workspaceId: workspace.workspaceId } })).toBe(0);
    expect(await resultOf(stored!.id, order.id)).toMatchObject({ status: 'handed_over' });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(3 * MINUTE_MS);
    expect(await db.whatsAppMessage.count({ where: { workspaceId: workspace.workspaceId } })).toBe(1);
  });

  it('sends nothing for an order cancelled, a rule disabled or replaced while waiting, a template no longer APPROVED, no phone', async () => {
    const { workspace, template, connection } = await notifyingWorkspace();
    const [cancelRule, disabledRule] = await storedRules(workspace, connection.id, [
      rule(template.id, { delayMinutes: 2 }),
      rule(template.id, { delayMinutes: 2 }),
    ]);
    const cancelled = await orderOf(connection);
    const other = await orderOf(connection);
    await startNotification(cancelRule!.id, cancelled.id);
    await startNotification(disabledRule!.id, other.id);
    await db.commerceOrder.update({ where: { id: cancelled.id }, data: { cancelledAt: new Date() } });
    await db.orderNotificationRule.update({ where: { id: disabledRule!.id }, data: { enabled: false } });
    expect(await resultOf(cancelRule!.id, cancelled.id)).toEqual({ status: 'skipped', reason: 'order_cancelled' });
    expect(await resultOf(disabledRule!.id, other.id)).toEqual({ status: 'skipped', reason: 'rule_disabled' });

    const [replaced] = await storedRules(workspace, connection.id, [rule(template.id, { delayMinutes: 2 })]);
    await startNotification(replaced!.id, other.id);
    await storedRules(workspace, connection.id, [rule(template.id, { delayMinutes: 2 })]);
    expect(await resultOf(replaced!.id, other.id)).toEqual({ status: 'skipped', reason: 'rule_gone' });

    const [now] = await storedRules(workspace, connection.id, [rule(template.id)]);
    const phoneless = await orderOf(connection, { customerPhone: null });
    await startNotification(now!.id, phoneless.id);
    expect(await resultOf(now!.id, phoneless.id)).toEqual({ status: 'skipped', reason: 'no_customer_phone' });
    await db.whatsAppTemplate.update({ where: { id: template.id }, data: { status: 'PAUSED' } });
    await startNotification(now!.id, other.id);
    expect(await resultOf(now!.id, other.id)).toEqual({ status: 'skipped', reason: 'template_not_approved' });

    expect(await db.whatsAppMessage.count({ where: { workspaceId: workspace.workspaceId } })).toBe(0);
    const balance = await api.request('GET', '/credits/balance', { key: workspace.key });
    expect(await balance.json()).toEqual({ balance: '1.0000', pendingHolds: '0.0000' });
  });

  it('is idempotent per rule and order: scheduled twice, started again, prepared again, one message', async () => {
    const { workspace, template, connection } = await notifyingWorkspace();
    const [first, disabled, second] = await storedRules(workspace, connection.id, [
      rule(template.id),
      rule(template.id, { enabled: false }),
      rule(template.id, { presetId: 'order_basic', delayMinutes: 1 }),
    ]);
    const order = await orderOf(connection);
    const environment = new MockActivityEnvironment({ taskQueue: temporal.taskQueue });
    const scheduled = (await environment.run(activities.scheduleOrderNotifications, { orderId: order.id })) as {
      ruleIds: string[];
    };
    expect(scheduled.ruleIds).toEqual([first!.id, second!.id]);
    expect(scheduled.ruleIds).not.toContain(disabled!.id);
    await resultOf(first!.id, order.id);
    await resultOf(second!.id, order.id);
    await environment.run(activities.scheduleOrderNotifications, { orderId: order.id });
    await expect(startNotification(first!.id, order.id)).rejects.toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
    const again = await activities.prepareOrderNotification({ ruleId: first!.id, orderId: order.id });
    const messages = await db.whatsAppMessage.findMany({ where: { workspaceId: workspace.workspaceId } });
    expect(messages.map((message) => message.idempotencyKey).sort()).toEqual(
      [`order:${first!.id}:${order.id}`, `order:${second!.id}:${order.id}`].sort(),
    );
    expect(messages.map((message) => message.id)).toContain((again as { messageId: string }).messageId);
    await until(
      () => db.whatsAppMessage.findMany({ where: { workspaceId: workspace.workspaceId } }),
      (rows) => rows.every((row) => row.status === 'read'),
    );
    const balance = await api.request('GET', '/credits/balance', { key: workspace.key });
    expect(await balance.json()).toEqual({ balance: '0.9600', pendingHolds: '0.0000' });
  });

  it('a cancelled order, or one of a removed connection, schedules nothing', async () => {
    const { workspace, template, connection } = await notifyingWorkspace();
    await storedRules(workspace, connection.id, [rule(template.id)]);
    const environment = new MockActivityEnvironment({ taskQueue: temporal.taskQueue });
    const cancelled = await orderOf(connection);
    await db.commerceOrder.update({ where: { id: cancelled.id }, data: { cancelledAt: new Date() } });
    expect(await environment.run(activities.scheduleOrderNotifications, { orderId: cancelled.id })).toEqual({
      ruleIds: [],
    });
    const order = await orderOf(connection);
    await db.crmConnection.update({ where: { id: connection.id }, data: { deletedAt: new Date() } });
    expect(await environment.run(activities.scheduleOrderNotifications, { orderId: order.id })).toEqual({
      ruleIds: [],
    });
  });
});
