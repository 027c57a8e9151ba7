import { type TwinSql, twinSchemaBatch } from '../twin-common/sql';

/**
 * The WhatsApp provider's own durable record, in a PostgreSQL schema of its own (`meta_twin`), not in the product's
 * (prisma/schema.prisma): the provider is a participant of its own, and the product neither reads nor migrates its
 * tables. Made at start (ensureMetaTwinTables), idempotently: a new database, or one the provider used before, serves.
 * Columns keep the names the provider's code reads (row.eventsDelivered, row.createdAt).
 */
export const META_TWIN_SCHEMA = 'meta_twin';
export const META_TWIN_TABLES = { message: `${META_TWIN_SCHEMA}.message`, template: `${META_TWIN_SCHEMA}.template` };

/** A message the provider took (outbound) or a contact wrote (inbound), with its plan of statuses. */
export interface MessageRow {
  /** wamid.<...> */
  id: string;
  phoneNumberId: string;
  /** Sender-chosen idempotency key (inbound: `inbound:<id>`): a retried send answers the first message. */
  clientKey: string;
  to: string;
  direction: 'outbound' | 'inbound';
  type: string;
  payload: Record<string, unknown>;
  /** The statuses it will report, in order, with their delays (rules.ts messagePlan). */
  plan: unknown[];
  webhookUrl: string | null;
  eventsDelivered: number;
  createdAt: Date;
}

/** A submitted template and where its review's webhooks are. */
export interface TemplateRow {
  id: string;
  businessAccountId: string;
  name: string;
  language: string;
  category: string;
  body: string;
  status: string;
  rejectedReason: string | null;
  qualityScore: string;
  webhookUrl: string | null;
  eventsDelivered: number;
  createdAt: Date;
}

const SCHEMA_SQL = twinSchemaBatch(
  META_TWIN_SCHEMA,
  `
CREATE TABLE IF NOT EXISTS ${META_TWIN_TABLES.message} (
  id text PRIMARY KEY,
  "phoneNumberId" text NOT NULL,
  "clientKey" text NOT NULL UNIQUE,
  "to" text NOT NULL,
  direction text NOT NULL,
  type text NOT NULL,
  payload jsonb NOT NULL,
  plan jsonb NOT NULL,
  "webhookUrl" text,
  "eventsDelivered" integer NOT NULL DEFAULT 0,
  "createdAt" timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS message_conversation_idx ON ${META_TWIN_TABLES.message} ("phoneNumberId", "to", direction, "createdAt");
CREATE TABLE IF NOT EXISTS ${META_TWIN_TABLES.template} (
  id text PRIMARY KEY,
  "businessAccountId" text NOT NULL,
  name text NOT NULL,
  language text NOT NULL,
  category text NOT NULL,
  body text NOT NULL,
  status text NOT NULL,
  "rejectedReason" text,
  "qualityScore" text NOT NULL DEFAULT 'UNKNOWN',
  "webhookUrl" text,
  "eventsDelivered" integer NOT NULL DEFAULT 0,
  "createdAt" timestamptz NOT NULL DEFAULT now(),
  UNIQUE ("businessAccountId", name, language)
);
`,
);

export async function ensureMetaTwinTables(sql: TwinSql): Promise<void> {
  await sql(SCHEMA_SQL);
}

const { message: MESSAGE, template: TEMPLATE } = META_TWIN_TABLES;

/** The provider's statements, over its own tables. */
export function metaTwinStore(sql: TwinSql) {
  return {
    async insertMessage(row: Omit<MessageRow, 'eventsDelivered'>): Promise<MessageRow> {
      const [inserted] = await sql<MessageRow>(
        `INSERT INTO ${MESSAGE} (id, "phoneNumberId", "clientKey", "to", direction, type, payload, plan, "webhookUrl", "createdAt")
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10) RETURNING *`,
        row.id,
        row.phoneNumberId,
        row.clientKey,
        row.to,
        row.direction,
        row.type,
        JSON.stringify(row.payload),
        JSON.stringify(row.plan),
        row.webhookUrl,
        row.createdAt,
      );
      return inserted!;
    },
    async messageByClientKey(clientKey: string): Promise<MessageRow | null> {
      const [row] = await sql<MessageRow>(`SELECT * FROM ${MESSAGE} WHERE "clientKey" = $1`, clientKey);
      return row ?? null;
    },
    async setMessageEventsDelivered(id: string, eventsDelivered: number): Promise<void> {
      await sql(`UPDATE ${MESSAGE} SET "eventsDelivered" = $2 WHERE id = $1`, id, eventsDelivered);
    },
    /** Messages with webhooks still owed: a restarted provider goes on with them. */
    messagesOwingWebhooks: () =>
      sql<MessageRow>(
        `SELECT * FROM ${MESSAGE} WHERE "eventsDelivered" < jsonb_array_length(plan) ORDER BY "createdAt", id`,
      ),
    async inboundSince(phoneNumberId: string, contact: string, since: Date): Promise<boolean> {
      const rows = await sql(
        `SELECT 1 FROM ${MESSAGE} WHERE "phoneNumberId" = $1 AND "to" = $2 AND direction = 'inbound' AND "createdAt" > $3 LIMIT 1`,
        phoneNumberId,
        contact,
        since,
      );
      return rows.length > 0;
    },
    async outboundCountTo(recipient: string): Promise<number> {
      const [row] = await sql<{ count: number }>(
        `SELECT count(*)::int AS count FROM ${MESSAGE} WHERE "to" = $1 AND direction = 'outbound'`,
        recipient,
      );
      return row!.count;
    },
    async insertTemplate(
      row: Omit<TemplateRow, 'rejectedReason' | 'qualityScore' | 'eventsDelivered'>,
    ): Promise<TemplateRow> {
      const [inserted] = await sql<TemplateRow>(
        `INSERT INTO ${TEMPLATE} (id, "businessAccountId", name, language, category, body, status, "webhookUrl", "createdAt")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
        row.id,
        row.businessAccountId,
        row.name,
        row.language,
        row.category,
        row.body,
        row.status,
        row.webhookUrl,
        row.createdAt,
      );
      return inserted!;
    },
    async templateById(id: string): Promise<TemplateRow | null> {
      const [row] = await sql<TemplateRow>(`SELECT * FROM ${TEMPLATE} WHERE id = $1`, id);
      return row ?? null;
    },
    /** Templates of the name and language, the first submitted first; in one account's when it is given. */
    templatesNamed: (name: string, language: string, businessAccountId: string | null) =>
      sql<TemplateRow>(
        `SELECT * FROM ${TEMPLATE} WHERE name = $1 AND language = $2 AND ($3::text IS NULL OR "businessAccountId" = $3)
         ORDER BY "createdAt", id`,
        name,
        language,
        businessAccountId,
      ),
    async setTemplateReview(
      id: string,
      review: { eventsDelivered: number; status: string; rejectedReason: string | null; qualityScore: string },
    ): Promise<void> {
      await sql(
        `UPDATE ${TEMPLATE} SET "eventsDelivered" = $2, status = $3, "rejectedReason" = $4, "qualityScore" = $5 WHERE id = $1`,
        id,
        review.eventsDelivered,
        review.status,
        review.rejectedReason,
        review.qualityScore,
      );
    },
    /** Templates whose review may still owe webhooks (at most 4, rules.ts): startDelivery passes over the rest. */
    templatesOwingWebhooks: () => sql<TemplateRow>(`SELECT * FROM ${TEMPLATE} WHERE "eventsDelivered" < 4`),
  };
}
