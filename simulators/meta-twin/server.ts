// Meta's WhatsApp Cloud API twin, hence the folder's name, meta-twin. The same server is also the embedded `simulated`
// WhatsApp provider: without `accounts` it asks for no token and its messages record the provider `simulated`
// (docs/features/whatsapp/simulated-provider.md); given `accounts` it is the Meta twin, provider `meta-twin`
// (docs/features/whatsapp/meta-cloud-api.md#the-meta-twin). One folder, two names, because it is one server.
import { createHmac, randomBytes, randomInt, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import express, { type Request, type Response } from 'express';
import { z } from 'zod';
import { createJsonHttp } from '../../lib/http/json-http';
import { closeHttp, listenHttp } from '../../lib/http/listen';
import { postUntilAnswered, sleep, type RetryBackoff } from '../../lib/http/post-until-answered';
import {
  META_ERROR,
  messagePlan,
  templateReviewSteps,
  templateStateAfter,
  waId,
  type PlanStep,
  type TemplateStep,
} from './rules';
import { isUniqueViolation, type TwinSql } from '../twin-common/sql';
import { ensureMetaTwinTables, metaTwinStore, type MessageRow, type TemplateRow } from './store';

/*
 * What the provider knows of Meta's platform it knows from Meta's documentation, not from the product (lib/whatsapp/),
 * so that a product misreading Meta meets what Meta would do.
 */

/**
 * Meta's webhook signature (https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads):
 * X-Hub-Signature-256 is `sha256=` and the hex HMAC-SHA256 of the raw body, keyed with the app secret.
 */
const SIGNATURE_HEADER = 'X-Hub-Signature-256';
const signatureOf = (body: string, appSecret: string) =>
  `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;

/**
 * The customer service window (https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-messages#customer-service-windows):
 * for 24 hours after the user's last message, the business may send any message; after it, only a template
 * (131047 re-engagement).
 */
const CUSTOMER_SERVICE_WINDOW_MS = 24 * 60 * 60 * 1_000;

/** A numeric id as the platform gives them (template, phone number, WhatsApp Business Account): 15 digits. */
const platformId = () => `${randomInt(1, 10)}${Array.from({ length: 14 }, () => randomInt(0, 10)).join('')}`;

/**
 * How many parameters a template body takes: its variables are numbered {{1}}, {{2}}, … {{n}} (Meta's message
 * templates guide), and a send gives one parameter per distinct number.
 */
const variableCountOf = (body: string) => new Set([...body.matchAll(/\{\{(\d+)\}\}/g)].map((match) => match[1])).size;

/**
 * The `simulated` WhatsApp provider: a participant of its own over HTTP, speaking the subset of Meta's
 * WhatsApp Cloud API (Graph API) the service uses. It takes sends (POST /{version}/{phone-number-id}/messages)
 * and template submissions (POST /{version}/{waba-id}/message_templates, GET /{version}/{template-id}),
 * decides reviews and delivery outcomes by the rules of rules.ts, keeps its own durable record (its own schema,
 * meta_twin: store.ts), and POSTs Meta-shaped webhooks signed with the
 * app secret (X-Hub-Signature-256) to the app's webhook URL, each retried with backoff until answered
 * 2xx, in order per message and per template, going on after a restart. Nothing leaves the machine.
 *
 * The simulator's own (not Meta's) operator/test hook: POST /simulator/inbound makes a contact write.
 */
export interface SimulatedWhatsAppProviderOptions {
  /** Runs its SQL on the database its own schema (`meta_twin`, store.ts) is made in at listen. */
  sql: TwinSql;
  /** Signs every webhook (HMAC-SHA256 of the raw body); never logged. */
  appSecret: string;
  /** The app's webhook subscription: where every webhook goes (pending ones too, after a restart). */
  webhookUrl: string;
  /** 1: real time (default); 0.001: a 2 s review takes 2 ms. The 24-hour window is never scaled. */
  timeScale?: number;
  /** Backoff of a webhook not answered 2xx (default 0.5 s doubling to 30 s). */
  retry?: RetryBackoff;
  /**
   * The platform's throughput per phone number (Cloud API: 80 messages per second by default): more new
   * sends from one number within one second (real time) are refused 130429. Unset: any rate is taken.
   * Counted in memory: a restarted provider starts afresh.
   */
  messagesPerSecond?: number;
  /**
   * The Meta twin (docs/features/whatsapp/meta-cloud-api.md#the-meta-twin): the system users' accounts it knows. Given, every Graph
   * request must carry `Authorization: Bearer <token>` of the account that owns the number or Business Account it
   * names (401 OAuthException code 190 without a known token; 400 code 100 subcode 33 for another account's object),
   * no Idempotency-Key is honoured, webhooks name the Business Account in entry.id and the number's display number,
   * and a template whose body has variables must carry its `example` values. Unset: the embedded simulated provider
   * (any id, no token, the Idempotency-Key kept).
   */
  accounts?: MetaTwinAccount[];
}

/** A system user's account on the Meta twin: its token, its WhatsApp Business Account and the account's numbers. */
export interface MetaTwinAccount {
  accessToken: string;
  businessAccountId: string;
  phoneNumbers: { id: string; displayPhoneNumber: string }[];
}

/**
 * Faults the twin is told to make (tests, the bench; also POST /control/faults): of the sends, every
 * 1/dropAnswerRate-th is processed but its answer lost (the connection reset), every 1/dropRequestRate-th is lost
 * before it is processed; the next `refuse.count` sends are refused with Meta's 130429 (throughput) or 131056 (pair
 * rate). Deterministic counters, not chance: 0.05 drops exactly every 20th. With statusBeforeLostAnswer, a send whose
 * answer is dropped loses it only once its first status webhook was answered (Meta's `sent` overtaking a lost answer);
 * with statusesAfterLostAnswerMs, its webhooks start that long after the answer was lost (the sender sees the loss
 * first). Neither: the two race, as they do at Meta.
 */
export interface MetaTwinFaults {
  dropAnswerRate?: number;
  statusBeforeLostAnswer?: boolean;
  statusesAfterLostAnswerMs?: number;
  dropRequestRate?: number;
  refuse?: { code: 130429 | 131056; count: number };
}

/** What the twin was asked and answered, for the conformance tests (the Authorization header is never kept). */
export interface MetaTwinExchange {
  method: string;
  path: string;
  body: unknown;
  status: number;
  answer: unknown;
}

export interface SimulatedWhatsAppProvider {
  listen(port: number, host?: string): Promise<string>;
  /** Stops delivering and closes the server; what is left to deliver is delivered by the next start. */
  close(): Promise<void>;
  /** The Meta twin's faults, replaced (an empty object: none). */
  setFaults(faults: MetaTwinFaults): void;
  /** Adds an account, or replaces the one of its Business Account (a rotated token: the old one stops working). */
  putAccount(account: MetaTwinAccount): void;
  /** Messages the twin took for a recipient (E.164 or wa_id): what reached them, however often it was asked. */
  deliveriesTo(recipient: string): Promise<number>;
  /** The Graph requests answered, oldest first (twin mode; bounded to the last 5,000). */
  readonly exchanges: MetaTwinExchange[];
  /** Sends taken whose answer the `dropAnswerRate` fault lost (the connection reset). */
  readonly answersLost: number;
  /** Meta's subscription check: GET webhookUrl?hub.mode=subscribe&hub.verify_token&hub.challenge; true when echoed. */
  verifySubscription(verifyToken: string): Promise<boolean>;
}

/** The header a send names its client key in: a second send with the key answers the first message. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** Sockets kept open to the webhook receiver: as many webhooks in flight at once. */
const WEBHOOK_SOCKETS = 64;

/** A refusal in Meta's error shape. */
class GraphError extends Error {
  constructor(
    readonly code: number,
    readonly title: string,
    readonly details: string,
    readonly httpStatus = 400,
    readonly subcode?: number,
  ) {
    // Graph's own errors (an access token refused) carry their message without the "(#code)" prefix.
    super(code === 190 ? title : `(#${code}) ${title}`);
  }
}

const invalidParameter = (details: string, subcode?: number) =>
  new GraphError(100, 'Invalid parameter', details, 400, subcode);

const textParameter = z.object({ type: z.literal('text'), text: z.string().max(32_768) });
/** What every send carries, whatever its type. */
const sendBase = z.object({
  messaging_product: z.literal('whatsapp'),
  recipient_type: z.literal('individual').optional(),
  biz_opaque_callback_data: z.string().max(512).optional(),
  to: z.string().regex(/^\+?[\d\s()-]{5,30}$/),
});
const sendSchema = z.discriminatedUnion('type', [
  sendBase.extend({
    type: z.literal('template'),
    template: z.object({
      name: z.string().min(1).max(512),
      language: z.object({ code: z.string().min(2).max(15), policy: z.literal('deterministic').optional() }),
      components: z.array(z.object({ type: z.string(), parameters: z.array(textParameter).optional() })).optional(),
    }),
  }),
  sendBase.extend({
    type: z.literal('text'),
    text: z.object({ body: z.string().min(1).max(4096), preview_url: z.boolean().optional() }),
  }),
]);
type SendBody = z.infer<typeof sendSchema>;

const submissionSchema = z.object({
  name: z.string().regex(/^[a-z0-9_]{1,512}$/),
  language: z.string().regex(/^[a-z]{2,3}(_[A-Z]{2})?$/),
  category: z.enum(['MARKETING', 'UTILITY', 'AUTHENTICATION']),
  allow_category_change: z.boolean().optional(),
  components: z
    .array(z.object({ type: z.string(), text: z.string().optional() }).loose())
    .refine((components) => components.filter((c) => c.type.toUpperCase() === 'BODY').length === 1, {
      message: 'exactly one BODY component',
    }),
});

/**
 * A contact's text, or its tap on a template's quick-reply button: Meta's webhook then has type `button` with the
 * button's `text` and `payload` (the payload the template defined, else its text: Meta's marketing opt-out button's
 * is "Stop promotions"), and the template message it answers as `context`.
 */
const inboundSchema = z
  .object({
    phoneNumberId: z.string().min(1).max(64),
    from: z.string().regex(/^\+?\d{6,15}$/),
    text: z.string().min(1).max(4096).optional(),
    button: z
      .object({
        text: z.string().min(1).max(256),
        payload: z.string().min(1).max(4096).optional(),
        /** The wamid of the template message whose button was tapped. */
        context: z.string().min(1).max(256).optional(),
      })
      .optional(),
    name: z.string().min(1).max(256).optional(),
  })
  .refine((inbound) => (inbound.text === undefined) !== (inbound.button === undefined), {
    message: 'give exactly one of text and button',
  });

/** One webhook of a message's or template's sequence: when it is due and what it says. */
interface Outgoing {
  dueAt: number;
  body: string;
}

/** A numeric id as the platform's are: 15 digits (below 2^53, so it survives JSON numbers). */
const unixSeconds = (ms: number) => String(Math.floor(ms / 1000));

export function createSimulatedWhatsAppProvider(options: SimulatedWhatsAppProviderOptions): SimulatedWhatsAppProvider {
  const { appSecret, webhookUrl } = options;
  const store = metaTwinStore(options.sql);
  const timeScale = options.timeScale ?? 1;
  const retry = options.retry ?? { firstMs: 500, maxMs: 30_000 };
  const stopping = new AbortController();
  const http = createJsonHttp({ sockets: WEBHOOK_SOCKETS });
  /** One delivery loop per message or template with webhooks left. */
  const deliveries = new Map<string, Promise<void>>();
  /** Per phone-number-id: when its sends of the last second were taken (messagesPerSecond). */
  const recentSends = new Map<string, number[]>();
  const twin = options.accounts !== undefined;
  const accounts = new Map<string, MetaTwinAccount>((options.accounts ?? []).map((a) => [a.businessAccountId, a]));
  let faults: MetaTwinFaults = {};
  let sends = 0;
  let answersLost = 0;
  const exchanges: MetaTwinExchange[] = [];

  /** The account of the request's Bearer token: 401 code 190 without one the twin knows. */
  function accountOf(req: Request): MetaTwinAccount | undefined {
    if (!twin) return undefined;
    const token = /^Bearer\s+(\S+)$/.exec(req.get('authorization') ?? '')?.[1];
    const account = token ? [...accounts.values()].find((a) => a.accessToken === token) : undefined;
    if (!account)
      throw new GraphError(190, 'Invalid OAuth access token - Cannot parse access token', 'OAuthException', 401);
    return account;
  }
  const notOurs = (id: string, method: string) =>
    invalidParameter(
      `Unsupported ${method} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
      33,
    );
  /** The Business Account and display number of a twin's number (for the webhooks' entry.id and metadata). */
  const twinNumberOf = (phoneNumberId: string) => {
    for (const account of accounts.values()) {
      const number = account.phoneNumbers.find((candidate) => candidate.id === phoneNumberId);
      if (number)
        return { businessAccountId: account.businessAccountId, displayPhoneNumber: number.displayPhoneNumber };
    }
    return {};
  };
  /** Every 1/rate-th send (rate 0.05: the 20th, 40th, ...). */
  const everyNth = (rate: number | undefined, n: number) => !!rate && rate > 0 && n % Math.round(1 / rate) === 0;

  function takeThroughput(phoneNumberId: string) {
    if (options.messagesPerSecond === undefined) return;
    const now = Date.now();
    const recent = (recentSends.get(phoneNumberId) ?? []).filter((at) => at > now - 1_000);
    if (recent.length >= options.messagesPerSecond)
      throw new GraphError(
        META_ERROR.rateLimited,
        'Rate limit hit',
        `Cloud API message throughput has been reached: ${options.messagesPerSecond} messages per second from this number`,
      );
    recentSends.set(phoneNumberId, [...recent, now]);
  }

  const envelope = (accountId: string, field: string, value: object, atMs: number) =>
    JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [{ id: accountId, time: Number(unixSeconds(atMs)), changes: [{ value, field }] }],
    });

  /**
   * The simulator keeps no registry of numbers (any phone-number-id is taken), so a messages webhook names
   * the phone-number-id as its display number and as its entry id (Meta: the number's digits, the WABA id).
   */
  const metadataOf = (phoneNumberId: string, displayPhoneNumber?: string | null) => ({
    display_phone_number: displayPhoneNumber ?? phoneNumberId,
    phone_number_id: phoneNumberId,
  });

  function messageWebhooks(row: MessageRow): Outgoing[] {
    const start = row.createdAt.getTime();
    const payload = row.payload as {
      category?: string;
      callbackData?: string | null;
      text?: string;
      button?: { text: string; payload?: string; context?: string } | null;
      name?: string | null;
      businessAccountId?: string | null;
      displayPhoneNumber?: string | null;
    };
    // Meta names the WhatsApp Business Account in entry.id (the simulated provider, knowing none, the number).
    const entryId = payload.businessAccountId ?? row.phoneNumberId;
    return (row.plan as unknown as PlanStep[]).map((step) => {
      const dueAt = start + step.atMs * timeScale;
      const base = {
        messaging_product: 'whatsapp',
        metadata: metadataOf(row.phoneNumberId, payload.displayPhoneNumber),
      };
      if (step.kind === 'inbound') {
        const value = {
          ...base,
          contacts: [{ profile: { name: payload.name ?? row.to }, wa_id: row.to }],
          messages: [
            payload.button
              ? {
                  from: row.to,
                  id: row.id,
                  timestamp: unixSeconds(dueAt),
                  type: 'button',
                  button: { text: payload.button.text, payload: payload.button.payload ?? payload.button.text },
                  ...(payload.button.context && { context: { from: row.phoneNumberId, id: payload.button.context } }),
                }
              : { from: row.to, id: row.id, timestamp: unixSeconds(dueAt), type: 'text', text: { body: payload.text } },
          ],
        };
        return { dueAt, body: envelope(entryId, 'messages', value, dueAt) };
      }
      const category = payload.category ?? 'service';
      const status = {
        id: row.id,
        status: step.status,
        timestamp: unixSeconds(dueAt),
        recipient_id: row.to,
        ...(payload.callbackData && { biz_opaque_callback_data: payload.callbackData }),
        ...(step.status !== 'failed' && {
          pricing: { billable: category !== 'service', pricing_model: 'PMP', category },
        }),
        ...(step.error && {
          errors: [
            {
              code: step.error.code,
              title: step.error.title,
              message: step.error.title,
              error_data: { details: 'The simulated recipient cannot be reached (number ending in 8 or 9).' },
            },
          ],
        }),
      };
      return { dueAt, body: envelope(entryId, 'messages', { ...base, statuses: [status] }, dueAt) };
    });
  }

  const templateSteps = (row: TemplateRow) => templateReviewSteps(row.name);
  const stepDueAt = (row: TemplateRow, step: TemplateStep) => row.createdAt.getTime() + step.atMs * timeScale;

  function templateWebhooks(row: TemplateRow): Outgoing[] {
    const named = {
      message_template_id: Number(row.id),
      message_template_name: row.name,
      message_template_language: row.language,
    };
    return templateSteps(row).map((step) => {
      const dueAt = stepDueAt(row, step);
      const body =
        step.kind === 'status'
          ? envelope(
              row.businessAccountId,
              'message_template_status_update',
              { event: step.status, ...named, reason: step.reason ?? 'NONE' },
              dueAt,
            )
          : envelope(
              row.businessAccountId,
              'message_template_quality_update',
              { previous_quality_score: step.previous, new_quality_score: step.quality, ...named },
              dueAt,
            );
      return { dueAt, body };
    });
  }

  /** The template's review now: where the steps already due leave it (whether or not their webhooks got through). */
  const templateStateOf = (row: TemplateRow) =>
    templateStateAfter(templateSteps(row).filter((step) => stepDueAt(row, step) <= Date.now()));

  /**
   * Posts the webhooks from `from` on, each when due and only after the one before was answered 2xx
   * (in order), writing down how many were delivered after each (`record`), so a restarted provider goes
   * on from there: at least once, a webhook whose record was lost is sent again.
   */
  async function deliver(webhooks: Outgoing[], from: number, record: (delivered: number) => Promise<void>) {
    let delay = retry.firstMs;
    let posted = false;
    for (let next = from; next < webhooks.length && !stopping.signal.aborted;) {
      const { dueAt, body } = webhooks[next]!;
      if (dueAt > Date.now()) {
        await sleep(dueAt - Date.now(), stopping.signal);
        continue;
      }
      posted ||= await postUntilAnswered(http, webhookUrl, {
        rawBody: body,
        headers: () => ({ [SIGNATURE_HEADER]: signatureOf(body, appSecret) }),
        retry,
        signal: stopping.signal,
      });
      if (!posted) return;
      try {
        await record(next + 1);
        next += 1;
        posted = false;
        delay = retry.firstMs;
      } catch {
        // Its own database unreachable: the delivery is written down once it answers again.
        await sleep(delay, stopping.signal);
        delay = Math.min(delay * 2, retry.maxMs);
      }
    }
  }

  function startDelivery(
    key: string,
    webhooks: Outgoing[],
    from: number,
    record: (delivered: number) => Promise<void>,
  ) {
    if (deliveries.has(key) || stopping.signal.aborted || from >= webhooks.length) return;
    const done = deliver(webhooks, from, record)
      .catch((error: unknown) => console.error(`simulated whatsapp: delivery of ${key} stopped`, error))
      .finally(() => deliveries.delete(key));
    deliveries.set(key, done);
  }

  /** Sends whose lost answer waits for their first status webhook to be answered (statusBeforeLostAnswer). */
  const firstStatusAnswered = new Map<string, () => void>();
  const deliverMessage = (row: MessageRow) =>
    startDelivery(row.id, messageWebhooks(row), row.eventsDelivered, async (eventsDelivered) => {
      await store.setMessageEventsDelivered(row.id, eventsDelivered);
      firstStatusAnswered.get(row.id)?.();
    });

  const deliverTemplate = (row: TemplateRow) =>
    startDelivery(row.id, templateWebhooks(row), row.eventsDelivered, async (eventsDelivered) => {
      const state = templateStateAfter(templateSteps(row).slice(0, eventsDelivered));
      await store.setTemplateReview(row.id, {
        eventsDelivered,
        status: state.status,
        rejectedReason: state.rejectedReason,
        qualityScore: state.quality,
      });
    });

  async function resumeDeliveries() {
    for (const row of await store.messagesOwingWebhooks()) deliverMessage(row);
    for (const row of await store.templatesOwingWebhooks()) deliverTemplate(row);
  }

  /** Records a message once per client key; a second send with the key (even a concurrent one) reads the first. */
  async function recordMessage(data: Omit<MessageRow, 'id' | 'eventsDelivered'>): Promise<MessageRow> {
    try {
      return await store.insertMessage({ id: `wamid.${randomBytes(27).toString('base64url')}`, ...data });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return (await store.messageByClientKey(data.clientKey))!;
    }
  }

  /** The template a send names, or the platform's refusal: unknown or not (yet) approved, paused, disabled, or parameters that do not match. */
  async function sendableTemplate(
    message: Extract<SendBody, { type: 'template' }>,
    account: MetaTwinAccount | undefined,
  ): Promise<TemplateRow> {
    const { name, language, components = [] } = message.template;
    const given = components
      .filter((component) => component.type.toLowerCase() === 'body')
      .reduce((count, component) => count + (component.parameters?.length ?? 0), 0);
    // No registry of numbers: the template is looked for by name and language in every account, the first
    // submitted (the one reviewed first) among those with as many variables as parameters given.
    const candidates = await store.templatesNamed(name, language.code, account?.businessAccountId ?? null);
    const notFound = new GraphError(
      META_ERROR.templateNotFound,
      'Template name does not exist in the translation',
      `template name (${name}) does not exist in ${language.code} or is not approved`,
    );
    if (!candidates.length) throw notFound;
    const template = candidates.find((row) => variableCountOf(row.body) === given);
    if (!template)
      throw new GraphError(
        132000,
        'Number of parameters does not match the expected number of params',
        `body: number of localizable_params (${given}) does not match the expected number of params (${variableCountOf(candidates[0]!.body)})`,
      );
    const { status } = templateStateOf(template);
    if (status === 'PAUSED')
      throw new GraphError(META_ERROR.templatePaused, 'Template is Paused', `template ${name} is paused`);
    if (status === 'DISABLED')
      throw new GraphError(META_ERROR.templateDisabled, 'Template is Disabled', `template ${name} is disabled`);
    if (status !== 'APPROVED') throw notFound;
    return template;
  }

  async function windowIsOpen(phoneNumberId: string, contact: string) {
    return store.inboundSince(phoneNumberId, contact, new Date(Date.now() - CUSTOMER_SERVICE_WINDOW_MS));
  }

  const sendAnswer = (input: string, row: MessageRow) => ({
    messaging_product: 'whatsapp',
    contacts: [{ input, wa_id: row.to }],
    messages: [{ id: row.id, ...(row.type === 'template' && { message_status: 'accepted' }) }],
  });

  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb' }));
  if (twin)
    app.use((req, res, next) => {
      // What was asked and answered, for the conformance tests; never the Authorization header.
      if (req.path.startsWith('/control/') || req.path.startsWith('/simulator/')) return next();
      const json = res.json.bind(res);
      res.json = (answer: unknown) => {
        exchanges.push({ method: req.method, path: req.originalUrl, body: req.body, status: res.statusCode, answer });
        if (exchanges.length > 5_000) exchanges.splice(0, exchanges.length - 5_000);
        return json(answer);
      };
      next();
    });
  // The twin's TEST CONTROL route, not Meta's: the faults it makes (MetaTwinFaults).
  app.post('/control/faults', (req, res) => {
    faults = (req.body ?? {}) as MetaTwinFaults;
    res.json(faults);
  });
  const route =
    (handler: (req: Request, res: Response) => Promise<void>) =>
    (req: Request, res: Response, next: (error: unknown) => void) => {
      handler(req, res).catch(next);
    };
  const graphRoute = (handler: (req: Request, res: Response) => Promise<void>) =>
    route(async (req, res) => {
      if (!/^v\d+\.\d+$/.test(String(req.params.version)))
        throw new GraphError(
          2500,
          'Unknown path components',
          `/${String(req.params.version)}: not a Graph API version`,
        );
      await handler(req, res);
    });
  const parsed = <T>(schema: z.ZodType<T>, body: unknown): T => {
    const result = schema.safeParse(body);
    if (!result.success)
      throw invalidParameter(
        result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '),
      );
    return result.data;
  };

  app.post(
    '/:version/:phoneNumberId/messages',
    graphRoute(async (req, res) => {
      const phoneNumberId = String(req.params.phoneNumberId);
      const account = accountOf(req);
      const number = account?.phoneNumbers.find((candidate) => candidate.id === phoneNumberId);
      if (account && !number) throw notOurs(phoneNumberId, 'post');
      // Meta has no idempotency key: the twin takes every send as a new message.
      const clientKey = (!twin && req.get(IDEMPOTENCY_HEADER)) || randomUUID();
      const n = ++sends;
      if (everyNth(faults.dropRequestRate, n)) {
        // Lost on the way: never processed, the connection reset.
        req.socket.destroy();
        return;
      }
      if (faults.refuse && faults.refuse.count > 0) {
        faults.refuse.count -= 1;
        throw faults.refuse.code === META_ERROR.pairRateLimited
          ? new GraphError(
              META_ERROR.pairRateLimited,
              'Spam Rate limit hit',
              'Message failed to send because there are restrictions on how many messages can be sent from this phone number to the same user in a short period of time.',
            )
          : new GraphError(
              META_ERROR.rateLimited,
              'Rate limit hit',
              'Message failed to send because there were too many messages sent from this phone number in a short period of time.',
            );
      }
      const existing = twin ? null : await store.messageByClientKey(clientKey);
      if (existing) {
        const input = (req.body as { to?: unknown } | undefined)?.to;
        res.json(sendAnswer(typeof input === 'string' ? input : existing.to, existing));
        return;
      }
      const body = parsed(sendSchema, req.body);
      const to = waId(body.to);
      let category = 'service';
      if (body.type === 'template') category = (await sendableTemplate(body, account)).category.toLowerCase();
      else if (!(await windowIsOpen(phoneNumberId, to)))
        throw new GraphError(
          META_ERROR.reEngagement,
          'Re-engagement message',
          'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
        );
      takeThroughput(phoneNumberId);
      const row = await recordMessage({
        phoneNumberId,
        clientKey,
        to,
        direction: 'outbound',
        type: body.type,
        payload: {
          request: body,
          category,
          callbackData: body.biz_opaque_callback_data ?? null,
          businessAccountId: account?.businessAccountId ?? null,
          displayPhoneNumber: number?.displayPhoneNumber ?? null,
        },
        plan: messagePlan(to),
        webhookUrl,
        createdAt: new Date(),
      });
      const loseAnswer = everyNth(faults.dropAnswerRate, n);
      const statusFirst =
        loseAnswer && faults.statusBeforeLostAnswer
          ? new Promise<void>((resolve) => {
              firstStatusAnswered.set(row.id, resolve);
              setTimeout(resolve, 10_000).unref();
            }).finally(() => firstStatusAnswered.delete(row.id))
          : null;
      const holdStatusesMs = loseAnswer && !statusFirst ? faults.statusesAfterLostAnswerMs : undefined;
      if (holdStatusesMs) setTimeout(() => deliverMessage(row), holdStatusesMs).unref();
      else deliverMessage(row);
      if (loseAnswer) {
        answersLost += 1;
        // Processed, its webhooks on their way, but the answer lost: the connection reset (after the first status).
        await statusFirst;
        req.socket.destroy();
        return;
      }
      res.json(sendAnswer(body.to, row));
    }),
  );

  app.post(
    '/:version/:businessAccountId/message_templates',
    graphRoute(async (req, res) => {
      const account = accountOf(req);
      if (account && account.businessAccountId !== String(req.params.businessAccountId))
        throw notOurs(String(req.params.businessAccountId), 'post');
      const submission = parsed(submissionSchema, req.body);
      const bodyComponent = submission.components.find((component) => component.type.toUpperCase() === 'BODY')!;
      const body = bodyComponent.text ?? '';
      if (!body.length || body.length > 1024)
        throw invalidParameter('components: BODY text must be 1 to 1024 characters');
      if (twin) {
        // Meta: a body with variables needs sample values, one per variable ({{1}} first), in example.body_text.
        const variableCount = variableCountOf(body);
        const samples = (bodyComponent.example as { body_text?: unknown } | undefined)?.body_text;
        const given = Array.isArray(samples) && Array.isArray(samples[0]) ? (samples[0] as unknown[]) : [];
        if (variableCount > 0 && (given.length !== variableCount || !given.every((v) => typeof v === 'string' && v)))
          throw new GraphError(
            100,
            'Invalid parameter',
            `components: BODY has ${variableCount} variable(s) and needs as many sample values in example.body_text`,
            400,
            2388043,
          );
      }
      let row: TemplateRow;
      try {
        row = await store.insertTemplate({
          id: platformId(),
          businessAccountId: String(req.params.businessAccountId),
          name: submission.name,
          language: submission.language,
          category: submission.category,
          body,
          status: 'PENDING',
          webhookUrl,
          createdAt: new Date(),
        });
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        throw invalidParameter(
          `Content in this language already exists: ${submission.name} (${submission.language})`,
          2388024,
        );
      }
      deliverTemplate(row);
      res.json({ id: row.id, status: 'PENDING', category: row.category });
    }),
  );

  app.get(
    '/:version/:templateId',
    graphRoute(async (req, res) => {
      const id = String(req.params.templateId);
      const account = accountOf(req);
      const found = await store.templateById(id);
      const row = account && found?.businessAccountId !== account.businessAccountId ? null : found;
      if (!row)
        throw invalidParameter(
          `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
          33,
        );
      const state = templateStateOf(row);
      res.json({
        id: row.id,
        name: row.name,
        language: row.language,
        status: state.status,
        category: row.category,
        rejected_reason: state.rejectedReason ?? 'NONE',
        quality_score: { score: state.quality, date: Number(unixSeconds(Date.now())) },
      });
    }),
  );

  // The simulator's own operator/test hook (not Meta's API): the contact `from` writes to the number.
  app.post(
    '/simulator/inbound',
    route(async (req, res) => {
      const inbound = parsed(inboundSchema, req.body);
      const id = `wamid.${randomBytes(27).toString('base64url')}`;
      const row = await store.insertMessage({
        id,
        phoneNumberId: inbound.phoneNumberId,
        clientKey: `inbound:${id}`,
        to: waId(inbound.from),
        direction: 'inbound',
        type: inbound.button ? 'button' : 'text',
        payload: {
          text: inbound.text ?? null,
          button: inbound.button ?? null,
          name: inbound.name ?? null,
          ...twinNumberOf(inbound.phoneNumberId),
        },
        plan: [{ atMs: 0, kind: 'inbound' } satisfies PlanStep],
        webhookUrl,
        createdAt: new Date(),
      });
      deliverMessage(row);
      res.json({ id: row.id, timestamp: unixSeconds(row.createdAt.getTime()) });
    }),
  );

  app.use((error: unknown, _req: Request, res: Response, _next: (error: unknown) => void) => {
    const graph =
      error instanceof GraphError
        ? error
        : error instanceof SyntaxError
          ? invalidParameter('the body is not JSON')
          : (console.error('simulated whatsapp: request failed', error),
            new GraphError(2, 'Service temporarily unavailable', 'simulated provider error', 500));
    res.status(graph.httpStatus).json({
      error: {
        message: graph.message,
        type: 'OAuthException',
        code: graph.code,
        ...(graph.subcode !== undefined && { error_subcode: graph.subcode }),
        ...(graph.code !== 190 && { error_data: { messaging_product: 'whatsapp', details: graph.details } }),
        fbtrace_id: randomBytes(12).toString('base64url'),
      },
    });
  });

  let server: Server | undefined;
  let closed: Promise<void> | undefined;
  return {
    exchanges,
    get answersLost() {
      return answersLost;
    },
    setFaults(next) {
      faults = { ...next, ...(next.refuse && { refuse: { ...next.refuse } }) };
    },
    putAccount(account) {
      accounts.set(account.businessAccountId, account);
    },
    async deliveriesTo(recipient) {
      return store.outboundCountTo(waId(recipient));
    },
    async verifySubscription(verifyToken) {
      const challenge = randomBytes(8).toString('hex');
      const target = new URL(webhookUrl);
      target.search = new URLSearchParams({
        'hub.mode': 'subscribe',
        'hub.verify_token': verifyToken,
        'hub.challenge': challenge,
      }).toString();
      const answer = await http.request('GET', target.toString(), { timeoutMs: 10_000 });
      return answer.status === 200 && answer.text === challenge;
    },
    async listen(port, host = '127.0.0.1') {
      await ensureMetaTwinTables(options.sql);
      const listening = await listenHttp(app, port, host);
      server = listening.server;
      await resumeDeliveries();
      return listening.url;
    },
    close() {
      closed ??= (async () => {
        stopping.abort();
        await Promise.all(deliveries.values());
        await closeHttp(server);
        http.close();
      })();
      return closed;
    },
  };
}
