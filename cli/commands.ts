import { z } from 'zod';
import type { Database } from '../lib/database';
import { ROLES } from '../lib/door/roles';
import {
  FEATURES,
  addMember,
  createApiKey,
  createWorkspace,
  grantCredits,
  revokeApiKey,
  updateMember,
  updateWorkspace,
} from '../lib/door/workspace-admin';
import { createResultWebhookEndpoint, isHttpUrl } from '../lib/result-webhooks/result-webhooks';
import { e164PhoneSchema } from '../lib/phone';
import {
  PHONE_CAPABILITIES,
  assignPhoneNumber,
  countryOf,
  releasePhoneNumber,
} from '../lib/phone-numbers/phone-numbers';
import { readFileSync } from 'node:fs';
import { journeyDefinitionSchema, validateJourney, type JourneyDefinition } from '../lib/journeys';
import { Refusal } from '../lib/refusal';
import { publishJourney, saveJourney, journeyView } from '../api/journeys/journeys';
import { configVariables } from '../lib/config';
import { connectWhatsAppSender } from '../lib/whatsapp/senders';
import { connectCrm, crmWebhookUrl } from '../lib/crm/connections';
import { CRM_CONNECTION_KINDS, shopDomainSchema } from '../lib/crm/shopify-webhook';

export class UsageError extends Error {}

type Flags = Record<string, string | boolean | undefined>;
type Command = (db: Database, flags: Flags) => Promise<Record<string, unknown>>;

const text = z.string().trim().min(1);
const list = z.string().transform((value) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean),
);
const plan = z.enum(['none', 'basic', 'ai']);
const workspaceStatus = z.enum(['approved', 'pending_approval', 'suspended']);
const features = list.pipe(z.array(z.enum(FEATURES)));
const rateLimit = z.coerce.number().int().positive().max(1_000_000);
const uuid = z.string().uuid();
const phoneNumber = e164PhoneSchema.refine((e164) => countryOf(e164) !== null, {
  message: 'must be a number of a country (non-geographic numbers such as +800 cannot be assigned)',
});
const capabilities = list.pipe(
  z.array(z.enum(PHONE_CAPABILITIES)).min(1, `give one or more of ${PHONE_CAPABILITIES.join(', ')}`),
);

const workspaceSettings = {
  plan: plan.optional(),
  features: features.optional(),
  status: workspaceStatus.optional(),
  'rate-limit': rateLimit.optional(),
  'chat-message-cap': z.coerce.number().int().positive().max(1_000_000).optional(),
};

function parseFlags<T extends z.ZodRawShape>(shape: T, flags: Flags): z.infer<z.ZodObject<T>> {
  const result = z.strictObject(shape).safeParse(flags);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const flag = issue.path[0] ?? (issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined);
  const reason = issue.code === 'unrecognized_keys' ? 'is not a flag of this command' : issue.message;
  throw new UsageError(`--${String(flag)}: ${flags[String(flag)] === true ? 'needs a value' : reason}`);
}

function settingsOf(flags: {
  plan?: 'none' | 'basic' | 'ai';
  features?: ('workflows' | 'd2c')[];
  status?: 'approved' | 'pending_approval' | 'suspended';
  'rate-limit'?: number;
  'chat-message-cap'?: number;
}) {
  return {
    plan: flags.plan,
    features: flags.features,
    status: flags.status,
    rateLimitPerMinute: flags['rate-limit'],
    chatMessageCap: flags['chat-message-cap'],
  };
}

export const adminCommands: Record<string, Command> = {
  'workspace create': async (db, raw) => {
    const flags = parseFlags({ name: text, ...workspaceSettings }, raw);
    return createWorkspace(db, flags.name, settingsOf(flags));
  },
  'workspace set': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid, ...workspaceSettings }, raw);
    return updateWorkspace(db, flags.workspace, settingsOf(flags));
  },
  'member add': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid, email: z.string().email(), role: z.enum(ROLES) }, raw);
    return addMember(db, flags.workspace, flags.email, flags.role);
  },
  'member set': async (db, raw) => {
    const flags = parseFlags(
      { member: uuid, role: z.enum(ROLES).optional(), status: z.enum(['active', 'suspended', 'removed']).optional() },
      raw,
    );
    return updateMember(db, flags.member, { role: flags.role, status: flags.status });
  },
  'key create': async (db, raw) => {
    const flags = parseFlags(
      { member: uuid, scopes: list.optional(), 'expires-at': z.iso.datetime({ offset: true }).optional() },
      raw,
    );
    const expiresAt = flags['expires-at'] ? new Date(flags['expires-at']) : undefined;
    return createApiKey(db, flags.member, { scopes: flags.scopes, expiresAt });
  },
  'key revoke': async (db, raw) => {
    const flags = parseFlags({ key: uuid }, raw);
    return revokeApiKey(db, flags.key);
  },
  'credits grant': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid, amount: z.coerce.number().positive().max(1e9) }, raw);
    return grantCredits(db, flags.workspace, flags.amount);
  },
  'workflow save': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid, file: text, name: text.max(200).optional(), id: uuid.optional() }, raw);
    if (!flags.id && !flags.name)
      throw new UsageError('--name is required for a new workflow (or give --id to save a new revision)');
    const definition = readDefinition(flags.file);
    const saved = await asUsage(() => saveJourney(db, flags.workspace, { id: flags.id, name: flags.name, definition }));
    return { ...journeyView(saved), problems: validateJourney(definition) };
  },
  'workflow publish': async (db, raw) => {
    const flags = parseFlags(
      { workspace: uuid, id: uuid, revision: z.coerce.number().int().positive().optional() },
      raw,
    );
    return journeyView(await asUsage(() => publishJourney(db, flags.workspace, flags.id, flags.revision)));
  },
  'webhook create': async (db, raw) => {
    const flags = parseFlags(
      {
        workspace: uuid,
        url: z.string().trim().refine(isHttpUrl, 'must be an absolute http(s) URL'),
        description: text.max(500).optional(),
      },
      raw,
    );
    return createResultWebhookEndpoint(db, flags.workspace, { url: flags.url, description: flags.description });
  },
  'number assign': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid, e164: phoneNumber, capabilities: capabilities.optional() }, raw);
    return assignPhoneNumber(db, flags.workspace, flags.e164, flags.capabilities);
  },
  'number release': async (db, raw) => {
    const flags = parseFlags({ e164: e164PhoneSchema }, raw);
    return releasePhoneNumber(db, flags.e164);
  },
  'whatsapp sender connect': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid, e164: phoneNumber, 'display-name': text.max(200).optional() }, raw);
    const provider = configVariables.shape.WHATSAPP_PROVIDER.parse(process.env.WHATSAPP_PROVIDER);
    return connectWhatsAppSender(db, {
      workspaceId: flags.workspace,
      e164: flags.e164,
      displayName: flags['display-name'],
      provider,
    });
  },
  'crm connect': async (db, raw) => {
    const flags = parseFlags(
      { workspace: uuid, kind: z.enum(CRM_CONNECTION_KINDS), shop: shopDomainSchema, secret: text.max(500) },
      raw,
    );
    const { id } = await connectCrm(db, {
      workspaceId: flags.workspace,
      kind: flags.kind,
      shopDomain: flags.shop,
      secret: flags.secret,
    });
    const publicBaseUrl = configVariables.shape.PUBLIC_BASE_URL.parse(process.env.PUBLIC_BASE_URL);
    return { id, webhookUrl: crmWebhookUrl(publicBaseUrl, id) };
  },
};

function readDefinition(file: string): JourneyDefinition {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--file: ${(error as Error).message}`);
  }
  // A file may hold the definition itself or { definition } as POST /workflows/variable-catalog takes it.
  const candidate = (json as { definition?: unknown })?.definition ?? json;
  const parsed = journeyDefinitionSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(`--file: ${issue.path.join('.') || 'definition'}: ${issue.message}`);
  }
  return parsed.data;
}

/** The services' refusals (an unknown workflow, an invalid graph) as the one-line message of the CLI. */
async function asUsage<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    const details =
      (error.extras as { details?: string[]; detail?: string }).details?.join('; ') ??
      (error.extras as { detail?: string }).detail;
    throw new UsageError(
      error.code === 'forbidden'
        ? 'no workflow of this workspace has this id'
        : `${error.code}${details ? `: ${details}` : ''}`,
    );
  }
}
