/**
 * The shape of a webhook's payload (GET /crm/connections/{id}/deliveries,
 * docs/features/commerce.md#connections-and-the-stores-webhooks): what fields it had and of which JSON types, never a
 * value. A node is one of:
 *
 * - `{ "type": "string" }`, `{ "type": "number" }`, `{ "type": "boolean" }`, `{ "type": "null" }`;
 * - `{ "type": "object", "keys": { <key>: <node>, ... } }`, keys in the payload's order; an object of
 *   more than SHAPE_MAX_KEYS keys keeps its first SHAPE_MAX_KEYS and adds `"omittedKeys": <how many cut>`;
 * - `{ "type": "array", "count": <items>, "items": <node> }`: `items` is the shape of the first item
 *   (absent when the array is empty);
 * - an object or array at depth SHAPE_MAX_DEPTH (the payload itself is depth 0) is not opened:
 *   `{ "type": "object", "truncated": true }` or `{ "type": "array", "count": <items>, "truncated": true }`;
 * - `{ "type": "none" }`: no payload was read (a rejected delivery: its signature or shop was wrong).
 */
export type PayloadShape =
  | { type: 'string' | 'number' | 'boolean' | 'null' | 'none' }
  | { type: 'object'; keys?: Record<string, PayloadShape>; omittedKeys?: number; truncated?: true }
  | { type: 'array'; count: number; items?: PayloadShape; truncated?: true };

export const SHAPE_MAX_DEPTH = 6;
export const SHAPE_MAX_KEYS = 100;

export function payloadShape(value: unknown, depth = 0): PayloadShape {
  if (value === null || value === undefined) return { type: 'null' };
  if (typeof value === 'string') return { type: 'string' };
  if (typeof value === 'number' || typeof value === 'bigint') return { type: 'number' };
  if (typeof value === 'boolean') return { type: 'boolean' };
  if (Array.isArray(value)) {
    if (depth >= SHAPE_MAX_DEPTH) return { type: 'array', count: value.length, truncated: true };
    return value.length
      ? { type: 'array', count: value.length, items: payloadShape(value[0], depth + 1) }
      : { type: 'array', count: 0 };
  }
  if (depth >= SHAPE_MAX_DEPTH) return { type: 'object', truncated: true };
  const entries = Object.entries(value as Record<string, unknown>);
  // A prototype-free object: a key named __proto__ is a key like any other.
  const keys: Record<string, PayloadShape> = Object.create(null) as Record<string, PayloadShape>;
  for (const [key, item] of entries.slice(0, SHAPE_MAX_KEYS)) keys[key] = payloadShape(item, depth + 1);
  return entries.length > SHAPE_MAX_KEYS
    ? { type: 'object', keys, omittedKeys: entries.length - SHAPE_MAX_KEYS }
    : { type: 'object', keys };
}
