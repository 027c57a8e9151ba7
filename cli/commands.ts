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
import { configVariables, parseFallbackWhatsAppProvider } from '../lib/config';
import { connectWhatsAppSender } from '../lib/whatsapp/senders';
import { connectCrm, crmWebhookUrl } from '../lib/crm/connections';
import {
  CRM_ADMIN_PROVIDERS,
  adminBaseUrlSchema,
  adminTokenSchema,
  listCrmConnectionsForOperator,
  rekeyCrmAdminTokens,
  setCrmAdminToken,
} from '../lib/crm/admin-token';
import { CRM_CONNECTION_KINDS, shopDomainSchema } from '../lib/crm/shopify-webhook';
import {
  CARRIER_PROVIDERS,
  carrierBaseUrlSchema,
  carrierSecretSchema,
  connectCarrier,
  familyOf,
  listCarrierConnections,
  rekeyCarrierConnections,
  removeCarrierConnection,
  rotateCarrierSecrets,
  telnyxConnectionIdSchema,
  telnyxPublicKeySchema,
  twilioAccountSidSchema,
  twilioApiKeySidSchema,
  type CarrierAccount,
} from '../lib/carrier-connections/connections';
import { ConflictError as StateConflict } from '../lib/operator-refusals';
import { resolveKeyring } from './secrets-keys';
import { rekeyRows, type RekeyReport } from '../lib/secrets/sealed-rows';
import { rekeyAnswer, SEALED_ROW_KINDS } from './rekey';
import {
  WHATSAPP_CONNECTION_PROVIDERS,
  connectWhatsApp,
  graphBaseUrlSchema,
  listWhatsAppConnections,
  metaIdSchema,
  rekeyWhatsAppConnections,
  removeWhatsAppConnection,
  rotateWhatsAppToken,
} from '../lib/whatsapp/connections';

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

export function parseFlags<T extends z.ZodRawShape>(shape: T, flags: Flags): z.infer<z.ZodObject<T>> {
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
    return createResultWebhookEndpoint(db, resolveKeyring(), flags.workspace, {
      url: flags.url,
      description: flags.description,
    });
  },
  'number assign': async (db, raw) => {
    const flags = parseFlags(
      {
        workspace: uuid,
        e164: phoneNumber,
        capabilities: capabilities.optional(),
        'carrier-connection': uuid.optional(),
      },
      raw,
    );
    const carrierConnectionId = flags['carrier-connection'];
    const { id } = await assignPhoneNumber(db, flags.workspace, flags.e164, flags.capabilities, carrierConnectionId);
    if (!carrierConnectionId) return { id };
    // Bound to a carrier: a number that routes to an inbound agent is pointed at the product there
    // (docs/features/carriers/inbound.md#pointing-the-number), and the answer says whether the carrier confirmed it.
    const publicBaseUrl = configVariables.shape.PUBLIC_BASE_URL.safeParse(process.env.PUBLIC_BASE_URL).data;
    // Imported here: it loads the carriers' SDKs, which no other command needs (each command is a process of its own).
    const { pointNumberAtProduct } = await import('../lib/phone-numbers/inbound-routing');
    const pointing = await pointNumberAtProduct({ db, keyring: resolveKeyring(), publicBaseUrl }, id);
    if (!pointing.confirmed && pointing.reason === 'no_inbound_agent') return { id, carrierConnectionId };
    return { id, carrierConnectionId, inboundRouting: pointing.confirmed ? 'confirmed' : pointing.reason };
  },
  'number release': async (db, raw) => {
    const flags = parseFlags({ e164: e164PhoneSchema }, raw);
    return releasePhoneNumber(db, flags.e164);
  },
  'whatsapp sender connect': async (db, raw) => {
    const flags = parseFlags(
      {
        workspace: uuid,
        e164: phoneNumber,
        'display-name': text.max(200).optional(),
        connection: uuid.optional(),
      },
      raw,
    );
    const provider = parseFallbackWhatsAppProvider();
    return connectWhatsAppSender(db, {
      workspaceId: flags.workspace,
      e164: flags.e164,
      displayName: flags['display-name'],
      provider,
      connectionId: flags.connection,
    });
  },
  'whatsapp connect': async (db, raw) => {
    const flags = parseFlags(
      {
        workspace: uuid,
        provider: z.enum(WHATSAPP_CONNECTION_PROVIDERS),
        label: text.max(200).optional(),
        'base-url': graphBaseUrlSchema.optional(),
        'phone-number-id': metaIdSchema,
        'business-account-id': metaIdSchema,
        'display-number': text.max(40),
        ...secretFlags('access-token'),
      },
      raw,
    );
    const accessToken = secretReader(flags).read('access-token', true)!;
    return asUsageOfState(() =>
      connectWhatsApp(db, resolveKeyring(), {
        workspaceId: flags.workspace,
        provider: flags.provider,
        label: flags.label,
        baseUrl: flags['base-url'],
        phoneNumberId: flags['phone-number-id'],
        businessAccountId: flags['business-account-id'],
        displayPhoneNumber: flags['display-number'],
        accessToken,
      }),
    );
  },
  'whatsapp list': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid }, raw);
    return { connections: await listWhatsAppConnections(db, flags.workspace) };
  },
  'whatsapp rotate': async (db, raw) => {
    const flags = parseFlags({ connection: uuid, ...secretFlags('access-token') }, raw);
    const accessToken = secretReader(flags).read('access-token', true)!;
    return rotateWhatsAppToken(db, resolveKeyring(), flags.connection, accessToken);
  },
  'whatsapp rekey': async (db, raw) => {
    parseFlags({}, raw);
    return rekeyAnswer('connection', await rekeyWhatsAppConnections(db, resolveKeyring()));
  },
  'whatsapp remove': async (db, raw) => {
    const flags = parseFlags({ connection: uuid }, raw);
    return removeWhatsAppConnection(db, flags.connection);
  },
  'crm connect': async (db, raw) => {
    const flags = parseFlags(
      { workspace: uuid, kind: z.enum(CRM_CONNECTION_KINDS), shop: shopDomainSchema, secret: text.max(500) },
      raw,
    );
    const { id } = await connectCrm(db, resolveKeyring(), {
      workspaceId: flags.workspace,
      kind: flags.kind,
      shopDomain: flags.shop,
      secret: flags.secret,
    });
    const publicBaseUrl = configVariables.shape.PUBLIC_BASE_URL.parse(process.env.PUBLIC_BASE_URL);
    return { id, webhookUrl: crmWebhookUrl(publicBaseUrl, id) };
  },
  'crm admin-token': async (db, raw) => {
    const flags = parseFlags(
      {
        connection: uuid,
        provider: z.enum(CRM_ADMIN_PROVIDERS).default('shopify'),
        'base-url': adminBaseUrlSchema.optional(),
        ...secretFlags('token'),
      },
      raw,
    );
    const token = secretReader(flags, adminTokenSchema).read('token', true)!;
    return asUsageOfState(() =>
      setCrmAdminToken(db, resolveKeyring(), {
        connectionId: flags.connection,
        token,
        provider: flags.provider,
        baseUrl: flags['base-url'],
      }),
    );
  },
  'crm list': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid }, raw);
    return { connections: await listCrmConnectionsForOperator(db, flags.workspace) };
  },
  'crm rekey': async (db, raw) => {
    parseFlags({}, raw);
    return rekeyAnswer('connection', await rekeyCrmAdminTokens(db, resolveKeyring()));
  },
  'carrier connect': async (db, raw) => {
    const flags = parseFlags(
      {
        workspace: uuid,
        provider: z.enum(CARRIER_PROVIDERS),
        label: text.max(200).optional(),
        'base-url': carrierBaseUrlSchema.optional(),
        'account-sid': twilioAccountSidSchema.optional(),
        'api-key-sid': twilioApiKeySidSchema.optional(),
        ...secretFlags('auth-token'),
        ...secretFlags('api-key-secret'),
        ...secretFlags('api-key'),
        'public-key': telnyxPublicKeySchema.optional(),
        'connection-id': telnyxConnectionIdSchema.optional(),
      },
      raw,
    );
    const family = familyOf(flags.provider);
    const secret = secretReader(flags);
    const flagsOf = {
      twilio: ['account-sid', 'api-key-sid', 'auth-token', 'api-key-secret'],
      telnyx: ['api-key', 'public-key', 'connection-id'],
    };
    const stray = Object.keys(raw).find((name) =>
      flagsOf[family === 'twilio' ? 'telnyx' : 'twilio'].includes(name.replace(/-(stdin|env)$/, '')),
    );
    if (stray) throw new UsageError(`--${stray}: not a flag of ${flags.provider} connections`);
    let account: CarrierAccount;
    if (family === 'twilio') {
      const accountSid = required(flags, 'account-sid');
      const apiKeySid = flags['api-key-sid'];
      if (apiKeySid) {
        // The key places the calls; the auth token only checks the callbacks' signatures: Twilio signs them with it.
        const apiKeySecret = secret.read('api-key-secret', true)!;
        if (!secret.given('auth-token'))
          throw new UsageError(
            "--auth-token is required with an API key pair (or --auth-token-stdin, --auth-token-env VAR): Twilio signs its callbacks with the account's auth token, never with a key",
          );
        account = {
          family,
          accountSid,
          apiKeySid,
          secrets: { apiKeySecret, authToken: secret.read('auth-token', true)! },
        };
      } else {
        if (secret.given('api-key-secret')) throw new UsageError('--api-key-secret: goes with --api-key-sid');
        account = { family, accountSid, secrets: { authToken: secret.read('auth-token', true)! } };
      }
    } else {
      account = {
        family,
        connectionId: required(flags, 'connection-id'),
        secrets: { apiKey: secret.read('api-key', true)!, publicKey: required(flags, 'public-key') },
      };
    }
    return asUsageOfState(() =>
      connectCarrier(db, resolveKeyring(), {
        workspaceId: flags.workspace,
        provider: flags.provider,
        label: flags.label,
        baseUrl: flags['base-url'],
        account,
      }),
    );
  },
  'carrier list': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid }, raw);
    return { connections: await listCarrierConnections(db, flags.workspace) };
  },
  'carrier rotate': async (db, raw) => {
    const flags = parseFlags(
      {
        connection: uuid,
        ...secretFlags('auth-token'),
        ...secretFlags('api-key-secret'),
        ...secretFlags('api-key'),
        'public-key': telnyxPublicKeySchema.optional(),
      },
      raw,
    );
    const secret = secretReader(flags);
    const update = {
      authToken: secret.read('auth-token'),
      apiKeySecret: secret.read('api-key-secret'),
      apiKey: secret.read('api-key'),
      publicKey: flags['public-key'],
    };
    return asUsageOfState(() => rotateCarrierSecrets(db, resolveKeyring(), flags.connection, update));
  },
  'carrier rekey': async (db, raw) => {
    parseFlags({}, raw);
    return rekeyAnswer('connection', await rekeyCarrierConnections(db, resolveKeyring()));
  },
  'secrets rekey': async (db, raw) => {
    parseFlags({}, raw);
    const keyring = resolveKeyring();
    const rekeyed: Record<string, string[]> = {};
    const unreadable: RekeyReport['unreadable'] = [];
    for (const [name, kind] of Object.entries(SEALED_ROW_KINDS)) {
      const report = await rekeyRows(db, keyring, kind);
      rekeyed[name] = report.rekeyed;
      unreadable.push(...report.unreadable);
    }
    const moved = Object.values(rekeyed).flat();
    return { ...rekeyAnswer('row', { keyId: keyring.currentKeyId, rekeyed: moved, unreadable }), rekeyed };
  },
  'carrier remove': async (db, raw) => {
    const flags = parseFlags({ connection: uuid }, raw);
    return removeCarrierConnection(db, flags.connection);
  },
};

/**
 * A secret's three flags: `--NAME value` (lands in shell history and `ps`), `--NAME-stdin` (the first line of
 * standard input), `--NAME-env VAR` (an environment variable's value). docs/features/carriers/connections.md#connecting-a-carrier.
 */
function secretFlags<Name extends string>(name: Name) {
  return {
    [name]: carrierSecretSchema.optional(),
    [`${name}-stdin`]: z.literal(true).optional(),
    [`${name}-env`]: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable')
      .optional(),
  } as unknown as { [K in Name | `${Name}-env`]: z.ZodOptional<z.ZodString> } & {
    [K in `${Name}-stdin`]: z.ZodOptional<z.ZodLiteral<true>>;
  };
}

/** Reads each secret from the one source its flags name; validated like a secret given inline. */
function secretReader(flags: Record<string, unknown>, schema: z.ZodType<string> = carrierSecretSchema) {
  const sources = (name: string) => [name, `${name}-stdin`, `${name}-env`].filter((flag) => flags[flag] !== undefined);
  const fromStdin = Object.keys(flags).filter((flag) => flag.endsWith('-stdin') && flags[flag] === true);
  if (fromStdin.length > 1) throw new UsageError(`--${fromStdin[1]}: standard input holds one secret only`);
  return {
    given: (name: string) => sources(name).length > 0,
    read(name: string, required = false): string | undefined {
      const [source, other] = sources(name);
      if (other) throw new UsageError(`--${other}: give --${name} one way only`);
      if (!source) {
        if (required) throw new UsageError(`--${name} is required (or --${name}-stdin, --${name}-env VAR)`);
        return undefined;
      }
      if (source === name) return flags[name] as string;
      const value = source.endsWith('-stdin')
        ? readFileSync(0, 'utf8').split(/\r?\n/)[0]
        : process.env[flags[source] as string];
      if (!value)
        throw new UsageError(
          `--${source}: ${source.endsWith('-stdin') ? 'standard input is empty' : `${String(flags[source])} is not set`}`,
        );
      const parsed = schema.safeParse(value);
      if (!parsed.success) throw new UsageError(`--${source}: ${parsed.error.issues[0]!.message}`);
      return parsed.data;
    },
  };
}

function required<Flags extends Record<string, unknown>, Name extends keyof Flags & string>(
  flags: Flags,
  name: Name,
): NonNullable<Flags[Name]> {
  const value = flags[name];
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value as NonNullable<Flags[Name]>;
}

/** A connection refused for what it holds (a Twilio key SID without its secret, a twin without its URL) is bad input. */
export async function asUsageOfState<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof StateConflict && /^a (Twilio|\S+ connection|shopify-twin token)/.test(error.message))
      throw new UsageError(error.message);
    throw error;
  }
}

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
