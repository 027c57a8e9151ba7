import { activityInfo } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Database } from '../../lib/database';
import type { SimulatorsSetting } from '../../lib/simulators';
import { presetParameters } from '../../lib/commerce/order-notification-presets';
import { messageIdByKey, recordTemplateMessageOnce } from '../../lib/whatsapp/outbound-message';
import type { OrderNotificationInput, OrderNotificationSkip } from '../../lib/commerce/order-notification';
import { startOrderNotification } from '../../lib/temporal/commerce';
import { whatsAppMessageWorkflowId } from '../../lib/temporal/workflow-ids';
import type { BoundActivities } from '../bind-activities';

export interface OrderNotificationDependencies {
  db: Database;
  /** SIMULATORS: enabled, a message the simulated provider carries holds no credits (unset: billed). */
  simulators?: SimulatorsSetting;
  /** To start the notifications' workflows. */
  temporal: Client;
  /**
   * Milliseconds a rule's delay minute lasts: 60,000 (unset) everywhere but in tests, which shorten it to
   * see a real durable timer fire within seconds.
   */
  orderNotificationMinuteMs?: number;
}

/** The message recorded, with the id of the workflow that hands it over (workflows cannot make ids); or why none. */
export type PreparedOrderNotification =
  { messageId: string; messageWorkflowId: string } | { skipped: OrderNotificationSkip };

const MINUTE_MS = 60_000;

/**
 * The one message of a rule for an order, whoever asks and however often
 * (docs/features/commerce.md#order-notifications).
 */
export const orderNotificationKey = ({ ruleId, orderId }: OrderNotificationInput) => `order:${ruleId}:${orderId}`;

/*
 * The activities of order notifications (workflows/commerce/order-notification.ts): starting one notification per
 * enabled rule when an order arrives, and at the end of its delay deciding whether it still sends, then
 * recording its WhatsApp message with the price held. The message's own workflow hands it to the provider.
 */

/** The checks at the end of the delay, then the message recorded with its hold; or why nothing goes. */
async function recordNotification(
  db: Database,
  input: OrderNotificationInput,
  simulators: SimulatorsSetting,
): Promise<{ messageId: string } | { skipped: OrderNotificationSkip }> {
  const [rule, order] = await Promise.all([
    db.orderNotificationRule.findUnique({ where: { id: input.ruleId } }),
    db.commerceOrder.findUnique({ where: { id: input.orderId } }),
  ]);
  if (!rule) return { skipped: 'rule_gone' };
  if (!rule.enabled) return { skipped: 'rule_disabled' };
  if (!order) return { skipped: 'order_gone' };
  if (order.cancelledAt) return { skipped: 'order_cancelled' };
  if (!order.customerPhone) return { skipped: 'no_customer_phone' };
  const { workspaceId, customerPhone } = order;
  const [template, sender, listed] = await Promise.all([
    db.whatsAppTemplate.findFirst({ where: { id: rule.templateId, workspaceId } }),
    db.whatsAppSender.findFirst({
      where: { workspaceId, status: 'CONNECTED' },
      orderBy: [{ connectedAt: 'asc' }, { id: 'asc' }],
    }),
    db.doNotCall.findUnique({ where: { workspaceId_phone: { workspaceId, phone: customerPhone } } }),
  ]);
  if (template?.status !== 'APPROVED') return { skipped: 'template_not_approved' };
  const parameters = presetParameters(rule.presetId, template.variableCount, order);
  if (!parameters) return { skipped: 'preset_mismatch' };
  if (!sender) return { skipped: 'no_connected_sender' };
  if (listed) return { skipped: 'do_not_call' };
  const recorded = await recordTemplateMessageOnce(
    db,
    {
      workspaceId,
      senderId: sender.id,
      to: customerPhone,
      template,
      parameters,
      idempotencyKey: orderNotificationKey(input),
    },
    { type: 'system', id: 'orderNotificationWorkflow' },
    simulators,
  );
  return 'messageId' in recorded ? recorded : { skipped: recorded.refused };
}

/** The message of this rule and order: recorded earlier (a retry), or now; or why none goes. */
async function recordOnce(
  db: Database,
  workspaceId: string | null,
  input: OrderNotificationInput,
  simulators: SimulatorsSetting,
) {
  const earlier = workspaceId && (await messageIdByKey(db, workspaceId, orderNotificationKey(input)));
  return earlier ? { messageId: earlier } : recordNotification(db, input, simulators);
}

/**
 * Starts one orderNotificationWorkflow per enabled ORDER_PLACED rule of the order's connection (ids
 * from orderNotificationWorkflowId; one already started, running or finished, is left alone). A
 * cancelled order, or one of a removed connection, starts none.
 */
export async function scheduleOrderNotifications(
  { db, temporal }: Pick<OrderNotificationDependencies, 'db' | 'temporal'>,
  { orderId }: { orderId: string },
): Promise<{ ruleIds: string[] }> {
  const order = await db.commerceOrder.findUnique({
    where: { id: orderId },
    select: { id: true, workspaceId: true, connectionId: true, cancelledAt: true },
  });
  if (!order || order.cancelledAt) return { ruleIds: [] };
  const connection = await db.crmConnection.findFirst({
    where: { id: order.connectionId, deletedAt: null },
    select: { id: true },
  });
  if (!connection) return { ruleIds: [] };
  const rules = await db.orderNotificationRule.findMany({
    where: { connectionId: connection.id, enabled: true, trigger: 'ORDER_PLACED' },
    orderBy: { position: 'asc' },
    select: { id: true },
  });
  const { taskQueue } = activityInfo();
  await Promise.all(
    rules.map(({ id: ruleId }) =>
      startOrderNotification(temporal, taskQueue, { ruleId, orderId: order.id }, order.workspaceId),
    ),
  );
  return { ruleIds: rules.map((rule) => rule.id) };
}

/** How long the notification waits: its rule's delay (a rule gone already: no wait, it ends at once). */
export async function orderNotificationDelay(
  {
    db,
    orderNotificationMinuteMs = MINUTE_MS,
  }: Pick<OrderNotificationDependencies, 'db' | 'orderNotificationMinuteMs'>,
  { ruleId }: { ruleId: string },
): Promise<{ delayMs: number }> {
  const rule = await db.orderNotificationRule.findUnique({ where: { id: ruleId }, select: { delayMinutes: true } });
  return { delayMs: (rule?.delayMinutes ?? 0) * orderNotificationMinuteMs };
}

/**
 * At the end of the delay: the message already recorded for this rule and order (a retry), or the checks
 * (the rule still there and enabled, the order there, not cancelled and with a phone, the template still
 * APPROVED and fillable by the preset, a connected sender, the phone not on the Do-Not-Call list) and the
 * message recorded under `order:<ruleId>:<orderId>` with its price held; else why nothing goes.
 */
export async function prepareOrderNotification(
  { db, simulators = 'billed' }: Pick<OrderNotificationDependencies, 'db' | 'simulators'>,
  input: OrderNotificationInput,
): Promise<PreparedOrderNotification> {
  const order = await db.commerceOrder.findUnique({ where: { id: input.orderId }, select: { workspaceId: true } });
  const prepared = await recordOnce(db, order?.workspaceId ?? null, input, simulators);
  return 'skipped' in prepared
    ? prepared
    : { messageId: prepared.messageId, messageWorkflowId: whatsAppMessageWorkflowId(prepared.messageId) };
}

export type OrderNotificationActivities = BoundActivities<{
  scheduleOrderNotifications: typeof scheduleOrderNotifications;
  orderNotificationDelay: typeof orderNotificationDelay;
  prepareOrderNotification: typeof prepareOrderNotification;
}>;
