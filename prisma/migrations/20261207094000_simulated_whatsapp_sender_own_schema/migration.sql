-- The embedded simulated WhatsApp sender (lib/whatsapp/simulated-whatsapp.ts: the journey whatsapp node of runs
-- recorded before patch whatsapp-node-provider) keeps the messages it pretends to send in a schema of its own,
-- simulated_whatsapp_sender, which it also makes before its first send (lib/whatsapp/simulated-whatsapp-store.ts, the
-- same table): its table leaves the product's schema. Its messages are moved, not dropped: a retried send of an old
-- run still finds its message under its key. Timestamps were UTC without a zone (Prisma's); its own are timestamptz.

-- The sender takes the same lock (a transaction's) while it makes the table.
SELECT pg_advisory_lock(hashtext('simulated_whatsapp_sender'));

CREATE SCHEMA IF NOT EXISTS simulated_whatsapp_sender;

CREATE TABLE IF NOT EXISTS simulated_whatsapp_sender.messages (
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

INSERT INTO simulated_whatsapp_sender.messages (id, "workspaceId", "messageKey", "to", "templateName", language,
                                                parameters, status, "createdAt")
SELECT id, "workspaceId", "messageKey", "to", "templateName", language, parameters, status,
       "createdAt" AT TIME ZONE 'UTC'
  FROM "SimulatedMessage"
ON CONFLICT DO NOTHING;

-- DropTable
DROP TABLE "SimulatedMessage";

SELECT pg_advisory_unlock(hashtext('simulated_whatsapp_sender'));
