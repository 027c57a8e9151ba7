import { randomBytes, randomUUID } from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { E164 } from '../twin-common/control-routes';
import type { TwinSql } from '../twin-common/sql';
import { personaOf, type PersonaScript } from '../twilio-twin/persona';
import { TELNYX_TWIN_TABLES, type telnyxTwinCallStore } from './call-store';
import { initialState, type CallRunner, type DialRequest } from './calls';
import type { TelnyxTwinAccount } from './config';
import { TELNYX_ERRORS } from './errors';
import { eventOf } from './events';

/**
 * The accounts' phone numbers and Call Control applications (docs/features/carriers/twins.md#inbound-calls-on-the-telnyx-twin),
 * as Telnyx's description has them (vendor/openapi/telnyx/): a number listed by `filter[phone_number]` and put on an
 * application (`connection_id`), an application read and its `webhook_event_url` set, so that the product points a
 * number at itself with the official SDK. Kept in the twin's own schema. TEST CONTROL, not Telnyx's: a number given to
 * an account, and a person calling a number (announced to its application's webhook URL as call.initiated, incoming,
 * parked until the application answers it).
 */
const NUMBERS = TELNYX_TWIN_TABLES.phoneNumbers;
const APPLICATIONS = TELNYX_TWIN_TABLES.applications;

interface PhoneNumberRow {
  id: string;
  account: string;
  phoneNumber: string;
  connectionId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

interface ApplicationRow {
  id: string;
  account: string;
  applicationName: string;
  webhookEventUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** PhoneNumberDetailed as Telnyx answers it. */
function phoneNumberResource(row: PhoneNumberRow) {
  return {
    id: row.id,
    record_type: 'phone_number',
    phone_number: row.phoneNumber,
    status: 'active',
    tags: [],
    external_pin: null,
    connection_id: row.connectionId,
    connection_name: null,
    customer_reference: null,
    messaging_profile_id: null,
    messaging_profile_name: null,
    billing_group_id: null,
    emergency_enabled: false,
    emergency_address_id: null,
    emergency_status: 'disabled',
    call_forwarding_enabled: true,
    cnam_listing_enabled: false,
    caller_id_name_enabled: false,
    call_recording_enabled: false,
    t38_fax_gateway_enabled: false,
    phone_number_type: 'local',
    inbound_call_screening: 'disabled',
    country_iso_alpha2: 'US',
    deletion_lock_enabled: false,
    hd_voice_enabled: false,
    purchased_at: row.createdAt.toISOString(),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** CallControlApplication as Telnyx answers it. */
function applicationResource(row: ApplicationRow) {
  return {
    id: row.id,
    record_type: 'call_control_application',
    application_name: row.applicationName,
    active: true,
    anchorsite_override: 'Latency',
    call_cost_in_webhooks: false,
    dtmf_type: 'RFC 2833',
    first_command_timeout: false,
    first_command_timeout_secs: 30,
    redact_dtmf_debug_logging: false,
    tags: [],
    webhook_api_version: '2',
    // Absent until set (Telnyx's description makes both URLs, where given, URLs).
    ...(row.webhookEventUrl && { webhook_event_url: row.webhookEventUrl }),
    webhook_timeout_secs: null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const isHttpUrl = (value: unknown) => {
  try {
    return typeof value === 'string' && ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
};

export interface IncomingNumberRoutes {
  app: Express;
  sql: TwinSql;
  accounts: readonly TelnyxTwinAccount[];
  personas: ReadonlyMap<string, PersonaScript>;
  calls: ReturnType<typeof telnyxTwinCallStore>;
  runner: CallRunner;
  route: (
    handler: (req: Request, res: Response) => Promise<void>,
  ) => (req: Request, res: Response, next: NextFunction) => void;
}

/** Seeds the accounts' applications (their connections) once; a number given twice stays as it is. */
export async function ensureApplications(sql: TwinSql, accounts: readonly TelnyxTwinAccount[]) {
  for (const account of accounts)
    for (const connection of account.connections)
      await sql(
        `INSERT INTO ${APPLICATIONS} (id, account, "applicationName", "webhookEventUrl") VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO NOTHING`,
        connection.id,
        account.id,
        `twin application ${connection.id}`,
        connection.webhookUrl ?? null,
      );
}

/** The numbers and applications routes (behind the API key's authentication) and their control routes. */
export function addIncomingNumberRoutes({ app, sql, accounts, personas, calls, runner, route }: IncomingNumberRoutes) {
  const accountOf = (res: Response) => res.locals.account as TelnyxTwinAccount;

  async function numberOf(req: Request, res: Response): Promise<PhoneNumberRow> {
    const [row] = await sql<PhoneNumberRow>(`SELECT * FROM ${NUMBERS} WHERE id = $1`, String(req.params.id));
    if (!row || row.account !== accountOf(res).id)
      throw TELNYX_ERRORS.notFound(`Phone number ${String(req.params.id)}`);
    return row;
  }
  async function applicationOf(req: Request, res: Response): Promise<ApplicationRow> {
    const [row] = await sql<ApplicationRow>(`SELECT * FROM ${APPLICATIONS} WHERE id = $1`, String(req.params.id));
    if (!row || row.account !== accountOf(res).id)
      throw TELNYX_ERRORS.notFound(`Call control application ${String(req.params.id)}`);
    return row;
  }

  app.get(
    '/v2/phone_numbers',
    route(async (req, res) => {
      const query = req.query as Record<string, unknown>;
      // filter[phone_number], as a flat key or as qs reads it.
      const filter = (query.filter ?? {}) as Record<string, unknown>;
      const wanted = query['filter[phone_number]'] ?? filter.phone_number;
      const rows = await sql<PhoneNumberRow>(
        `SELECT * FROM ${NUMBERS} WHERE account = $1 AND ($2::text IS NULL OR "phoneNumber" = $2)
          ORDER BY "createdAt", id LIMIT 250`,
        accountOf(res).id,
        typeof wanted === 'string' ? wanted : null,
      );
      res.json({
        data: rows.map(phoneNumberResource),
        meta: { page_number: 1, page_size: 250, total_pages: 1, total_results: rows.length },
      });
    }),
  );

  app.patch(
    '/v2/phone_numbers/:id',
    route(async (req, res) => {
      const row = await numberOf(req, res);
      const body = (req.body ?? {}) as Record<string, unknown>;
      const connectionId = body.connection_id;
      if (connectionId !== undefined && connectionId !== null && typeof connectionId !== 'string')
        throw TELNYX_ERRORS.invalid('connection_id', 'connection_id must be a string');
      if (typeof connectionId === 'string') {
        const [known] = await sql<{ id: string }>(
          `SELECT id FROM ${APPLICATIONS} WHERE id = $1 AND account = $2`,
          connectionId,
          row.account,
        );
        if (!known) throw TELNYX_ERRORS.invalidConnection();
      }
      const [updated] = await sql<PhoneNumberRow>(
        `UPDATE ${NUMBERS} SET "connectionId" = CASE WHEN $2 THEN $3 ELSE "connectionId" END, "updatedAt" = now()
          WHERE id = $1 RETURNING *`,
        row.id,
        connectionId !== undefined,
        connectionId ?? null,
      );
      res.json({ data: phoneNumberResource(updated!) });
    }),
  );

  app.get(
    '/v2/call_control_applications/:id',
    route(async (req, res) => {
      res.json({ data: applicationResource(await applicationOf(req, res)) });
    }),
  );

  app.patch(
    '/v2/call_control_applications/:id',
    route(async (req, res) => {
      const row = await applicationOf(req, res);
      const body = (req.body ?? {}) as Record<string, unknown>;
      // Both required by Telnyx's description of UpdateCallControlApplication.
      if (typeof body.application_name !== 'string' || body.application_name === '')
        throw TELNYX_ERRORS.missing('application_name');
      if (!isHttpUrl(body.webhook_event_url))
        throw TELNYX_ERRORS.invalid('webhook_event_url', 'webhook_event_url must be a valid URL.');
      const [updated] = await sql<ApplicationRow>(
        `UPDATE ${APPLICATIONS} SET "applicationName" = $2, "webhookEventUrl" = $3, "updatedAt" = now()
          WHERE id = $1 RETURNING *`,
        row.id,
        body.application_name,
        body.webhook_event_url,
      );
      res.json({ data: applicationResource(updated!) });
    }),
  );

  // ---- TEST CONTROL, not Telnyx's.

  app.post(
    '/control/incoming-numbers',
    route(async (req, res) => {
      const parsed = z
        .strictObject({ phoneNumber: z.string().regex(E164), account: z.string().optional() })
        .safeParse(req.body);
      const account = accounts.find((candidate) => candidate.id === (parsed.data?.account ?? accounts[0]?.id));
      if (!parsed.success || !account) {
        res.status(400).json({ error: 'invalid_body', issues: parsed.error?.issues ?? [] });
        return;
      }
      await sql(
        `INSERT INTO ${NUMBERS} (id, account, "phoneNumber") VALUES ($1, $2, $3) ON CONFLICT ("phoneNumber") DO NOTHING`,
        String(BigInt(`0x${randomBytes(7).toString('hex')}`)),
        account.id,
        parsed.data.phoneNumber,
      );
      const [row] = await sql<PhoneNumberRow>(
        `SELECT * FROM ${NUMBERS} WHERE "phoneNumber" = $1`,
        parsed.data.phoneNumber,
      );
      res.json(phoneNumberResource(row!));
    }),
  );

  /**
   * A person at `from` calls `to`, a number on an application: Telnyx announces the call to the application's
   * webhook_event_url (call.initiated, direction incoming, state parked) and waits for a command (answer, hangup); the
   * persona of `from` plays the caller; `loseHangupWebhook` loses its end's call.hangup webhook. 404 when no
   * application with a webhook URL has the number.
   */
  app.post(
    '/control/incoming-calls',
    route(async (req, res) => {
      const parsed = z
        .strictObject({
          from: z.string().regex(E164),
          to: z.string().regex(E164),
          /** Its call.hangup webhook is never sent: the end lost on the way. */
          loseHangupWebhook: z.boolean().optional(),
        })
        .safeParse(req.body);
      if (!parsed.success) {
        res.status(400).json({ error: 'invalid_body', issues: parsed.error.issues });
        return;
      }
      const { from, to, loseHangupWebhook = false } = parsed.data;
      const [target] = await sql<{ account: string; connectionId: string; webhookEventUrl: string | null }>(
        `SELECT n.account, n."connectionId", a."webhookEventUrl" FROM ${NUMBERS} n
           JOIN ${APPLICATIONS} a ON a.id = n."connectionId" WHERE n."phoneNumber" = $1`,
        to,
      );
      if (!target?.webhookEventUrl) {
        res.status(404).json({ error: target ? 'webhook_url_not_set' : 'number_not_on_an_application' });
        return;
      }
      const request: DialRequest = {
        webhookUrl: target.webhookEventUrl,
        timeoutSecs: 30,
        timeLimitSecs: 14_400,
        amd: 'disabled',
        amdTotalAnalysisMs: 3_500,
        direction: 'incoming',
        ...(loseHangupWebhook && { loseHangupWebhook }),
      };
      const now = new Date();
      const id = `v3:${randomBytes(30).toString('base64url')}`;
      const initiated = eventOf('call.initiated', now, {
        call_control_id: id,
        call_leg_id: randomUUID(),
        call_session_id: randomUUID(),
        connection_id: target.connectionId,
        direction: 'incoming',
        from,
        start_time: now.toISOString(),
        state: 'parked',
        to,
      });
      await calls.create(
        {
          callControlId: id,
          callLegId: initiated.data.payload.call_leg_id,
          callSessionId: initiated.data.payload.call_session_id,
          account: target.account,
          connectionId: target.connectionId,
          commandId: null,
          to,
          from,
          status: 'parked',
          clientState: null,
          createdAt: now,
          request,
          persona: personaOf(personas, from),
          state: initialState(request, to),
        },
        { url: target.webhookEventUrl, method: 'POST', event: initiated },
      );
      runner.start(id);
      runner.deliver(id, target.account);
      res.status(201).json({ sid: id, from, to });
    }),
  );
}
