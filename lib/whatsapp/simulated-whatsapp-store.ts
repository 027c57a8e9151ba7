import type { RunSql } from '../run-sql';
import type { SentMessage, TemplateMessage } from './sender';

/**
 * The embedded simulated sender's record (simulated-whatsapp.ts), in a PostgreSQL schema of its own
 * (`simulated_whatsapp_sender`), not in the product's (prisma/schema.prisma): the messages it pretends to have sent are
 * a stand-in's state, not the product's. Made before its first statement (ensure), idempotently; the migration
 * simulated_whatsapp_sender_own_schema made the same table and moved the messages of before into it.
 */
export const SIMULATED_WHATSAPP_SENDER_SCHEMA = 'simulated_whatsapp_sender';
export const SIMULATED_WHATSAPP_SENDER_TABLES = { messages: `${SIMULATED_WHATSAPP_SENDER_SCHEMA}.messages` };
const { messages: MESSAGES } = SIMULATED_WHATSAPP_SENDER_TABLES;

/*
 * One simple-protocol batch (no parameters): the advisory lock makes two workers starting on one database at once (or
 * one and the migration) create the table once; CREATE ... IF NOT EXISTS alone races on PostgreSQL's catalog.
 */
const SCHEMA_SQL = `BEGIN;
SELECT pg_advisory_xact_lock(hashtext('${SIMULATED_WHATSAPP_SENDER_SCHEMA}'));
CREATE SCHEMA IF NOT EXISTS ${SIMULATED_WHATSAPP_SENDER_SCHEMA};
CREATE TABLE IF NOT EXISTS ${MESSAGES} (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  "workspaceId" uuid NOT NULL,
  "messageKey" text NOT NULL UNIQUE,
  "to" text NOT NULL,
  "templateName" text NOT NULL,
  language text NOT NULL,
  parameters jsonb NOT NULL,
  status text NOT NULL,
  "createdAt" timestamptz NOT NULL DEFAULT now()
);
COMMIT;`;

/** A message as the sender recorded it. */
export interface SimulatedWhatsAppMessage {
  id: string;
  status: SentMessage['status'];
}

export function simulatedWhatsAppStore(sql: RunSql) {
  let made: Promise<void> | undefined;
  /** The schema made once per process (again after a failure). */
  const ensure = () =>
    (made ??= sql(SCHEMA_SQL).then(
      () => undefined,
      (error: unknown) => {
        made = undefined;
        throw error;
      },
    ));
  return {
    /**
     * The message recorded once per key, in one statement (a second send of the key inserts nothing and reads the
     * first); a concurrent send of the same key committed after this statement's snapshot is read after it.
     */
    async recordOnce(message: TemplateMessage, status: SentMessage['status']): Promise<SimulatedWhatsAppMessage> {
      await ensure();
      const byKey = `SELECT id, status FROM ${MESSAGES} WHERE "messageKey" = $1`;
      const [row] = await sql<SimulatedWhatsAppMessage>(
        `WITH created AS (
           INSERT INTO ${MESSAGES} ("workspaceId", "messageKey", "to", "templateName", language, parameters, status)
           VALUES ($2::uuid, $1, $3, $4, $5, $6::jsonb, $7)
           ON CONFLICT ("messageKey") DO NOTHING
           RETURNING id, status
         )
         SELECT id, status FROM created
         UNION ALL SELECT id, status FROM ${MESSAGES} WHERE "messageKey" = $1 AND NOT EXISTS (SELECT 1 FROM created)`,
        message.messageKey,
        message.workspaceId,
        message.to,
        message.templateName,
        message.language,
        JSON.stringify(message.parameters),
        status,
      );
      return row ?? (await sql<SimulatedWhatsAppMessage>(byKey, message.messageKey))[0]!;
    },
  };
}
