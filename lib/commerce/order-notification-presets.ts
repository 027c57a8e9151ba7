/**
 * What an order-notification rule's `presetId` means (PUT /crm/connections/{id}/order-notifications,
 * docs/features/commerce.md#order-notifications): a named mapping from the order to the template's variables. A preset
 * lists values in order; a template with n variables {{1}}..{{n}} is given the preset's first n values,
 * so a template may use fewer variables than its preset offers, never more (else 400 at the rule's
 * presetId, and a notification finding it so later sends nothing: preset_mismatch).
 */
export interface PresetOrder {
  customerName: string;
  orderNumber: string;
  totalPrice: string;
  currency: string;
}

/** An order without a customer name is greeted as this. */
export const UNNAMED_CUSTOMER = 'Customer';

const name = (order: PresetOrder) => order.customerName.trim() || UNNAMED_CUSTOMER;
const total = (order: PresetOrder) => `${order.totalPrice} ${order.currency}`.trim();

export const ORDER_NOTIFICATION_PRESETS = {
  /** {{1}} the customer's name, {{2}} the order number, {{3}} the total with its currency ("49.90 EUR"). */
  order_basic: (order: PresetOrder) => [name(order), order.orderNumber, total(order)],
  /** {{1}} the order number. */
  order_number: (order: PresetOrder) => [order.orderNumber],
  /** {{1}} the customer's name. */
  customer_name: (order: PresetOrder) => [name(order)],
  /** No variables: a template without any. */
  no_variables: (): string[] => [],
} as const satisfies Record<string, (order: PresetOrder) => string[]>;

export type OrderNotificationPresetId = keyof typeof ORDER_NOTIFICATION_PRESETS;
export const ORDER_NOTIFICATION_PRESET_IDS = Object.keys(ORDER_NOTIFICATION_PRESETS) as [
  OrderNotificationPresetId,
  ...OrderNotificationPresetId[],
];

export const isOrderNotificationPreset = (presetId: string): presetId is OrderNotificationPresetId =>
  Object.hasOwn(ORDER_NOTIFICATION_PRESETS, presetId);

/** How many variables the preset fills at most. */
export const presetValueCount = (presetId: OrderNotificationPresetId): number =>
  ORDER_NOTIFICATION_PRESETS[presetId]({ customerName: '', orderNumber: '', totalPrice: '', currency: '' }).length;

/** The template's variables for this order: the preset's first `variableCount` values; null when it has fewer. */
export function presetParameters(presetId: string, variableCount: number, order: PresetOrder): string[] | null {
  if (!isOrderNotificationPreset(presetId)) return null;
  const values = ORDER_NOTIFICATION_PRESETS[presetId](order);
  return variableCount <= values.length ? values.slice(0, variableCount) : null;
}

/** The longest delay a rule may wait after the order (7 days), in minutes. */
export const MAX_ORDER_NOTIFICATION_DELAY_MINUTES = 10_080;
/** The most rules a connection holds (spec section 8). */
export const MAX_ORDER_NOTIFICATION_RULES = 16;
/** recentOrderVolume counts the connection's orders placed in this many last days. */
export const RECENT_ORDER_VOLUME_DAYS = 30;

/**
 * What the answer's templatePurpose says, from the template's category: the platform reviews and prices a
 * template by it. utility (order and account updates: what order notifications are) is `transactional`.
 */
export const TEMPLATE_PURPOSES = {
  utility: 'transactional',
  marketing: 'marketing',
  authentication: 'authentication',
} as const;
