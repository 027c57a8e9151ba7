import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { Database } from '../database';
import { NotFoundError } from '../operator-refusals';
import type { Keyring } from '../secrets/keyring';
import { sealEndpointSecret } from './endpoint-secrets';

/**
 * Result webhooks follow Standard Webhooks (https://www.standardwebhooks.com): a secret `whsec_<base64
 * of 32 random bytes>`, and on every attempt the headers webhook-id, webhook-timestamp (Unix seconds)
 * and webhook-signature `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed with the secret's
 * decoded bytes. The secret is kept sealed with the key ring (it must be kept, to sign: endpoint-secrets.ts) and shown
 * once, when created.
 */
const SECRET_PREFIX = 'whsec_';

export const WEBHOOK_URL_MAX_LENGTH = 2_000;

export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** A delivery's id, the webhook-id of every attempt of it. */
export function generateDeliveryId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/** An absolute http or https URL. */
export function isHttpUrl(value: string): boolean {
  if (value.length > WEBHOOK_URL_MAX_LENGTH || !URL.canParse(value)) return false;
  const { protocol, hostname } = new URL(value);
  return (protocol === 'http:' || protocol === 'https:') && hostname !== '';
}

/** The webhook-signature header of one attempt. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** Creates an endpoint for a workspace, its secret sealed under the ring's current key; the secret is returned this once. */
export async function createResultWebhookEndpoint(
  db: Database,
  keyring: Keyring,
  workspaceId: string,
  input: { url: string; description?: string },
): Promise<{ id: string; secret: string }> {
  if (!isHttpUrl(input.url)) throw new Error('url must be an absolute http(s) URL');
  const workspace = await db.workspace.findFirst({ where: { id: workspaceId, deletedAt: null }, select: { id: true } });
  if (!workspace) throw new NotFoundError(`workspace ${workspaceId} not found`);
  const secret = generateWebhookSecret();
  const id = randomUUID();
  await db.resultWebhookEndpoint.create({
    data: {
      id,
      workspaceId,
      url: input.url,
      description: input.description ?? null,
      ...sealEndpointSecret(keyring, { workspaceId, id, url: input.url }, secret),
    },
    select: { id: true },
  });
  return { id, secret };
}
