import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSimulatedWhatsApp } from '../../lib/whatsapp/simulated-whatsapp';
import { SIMULATED_WHATSAPP_SENDER_TABLES } from '../../lib/whatsapp/simulated-whatsapp-store';
import { startTestCarrier, simulatedCarrierRecord } from '../support/carrier';
import { useTestDatabase } from '../support/database';

/*
 * The migrations that took the simulated carrier's calls and the embedded simulated WhatsApp sender's messages out of
 * the product's schema (prisma/migrations/20261207093000_simulated_carrier_own_schema,
 * 20261207094000_simulated_whatsapp_sender_own_schema) move their rows, not drop them: replayed here over the tables
 * as the migrations of before left them, the carrier and the sender then go on with what was there.
 */

const { db } = await useTestDatabase();
const migration = (name: string) =>
  readFileSync(path.join(import.meta.dirname, '../../prisma/migrations', name, 'migration.sql'), 'utf8');

/** The tables as prisma/migrations of before made them (Prisma's shapes: timestamps UTC without a zone). */
const TABLES_OF_BEFORE = `
DROP SCHEMA simulated_carrier CASCADE;
DROP SCHEMA simulated_whatsapp_sender CASCADE;
CREATE TABLE "SimulatedProviderCall" (
  "attemptId" TEXT NOT NULL PRIMARY KEY, "providerCallId" TEXT NOT NULL UNIQUE, "to" TEXT NOT NULL,
  "outcome" TEXT NOT NULL, "durationMs" INTEGER NOT NULL, "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "agent" JSONB, "eventsDelivered" INTEGER NOT NULL DEFAULT 0, "fromNumber" TEXT, "hangupAt" TIMESTAMP(3),
  "lead" JSONB, "statusCallbackUrl" TEXT, "statusCallbackEvents" JSONB);
CREATE TABLE "SimulatedMessage" (
  "id" UUID NOT NULL PRIMARY KEY, "workspaceId" UUID NOT NULL, "messageKey" TEXT NOT NULL UNIQUE, "to" TEXT NOT NULL,
  "templateName" TEXT NOT NULL, "language" TEXT NOT NULL, "parameters" JSONB NOT NULL, "status" TEXT NOT NULL,
  "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP);
INSERT INTO "SimulatedProviderCall" ("attemptId", "providerCallId", "to", outcome, "durationMs", "createdAt",
  "eventsDelivered", "hangupAt", lead, "statusCallbackEvents")
VALUES ('lead-1:1', 'sim_before', '+14155550125', 'busy', 0, '2026-12-01 10:00:00.250', 3, '2026-12-01 10:00:01.5',
  '{"name":"Ana","fields":{}}', '["in-progress"]');
INSERT INTO "SimulatedMessage" (id, "workspaceId", "messageKey", "to", "templateName", language, parameters, status,
  "createdAt")
VALUES ('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', 'journey:run:node:1',
  '+14155550129', 'welcome', 'en', '["Ana"]', 'failed', '2026-12-01 10:00:00');`;

describe('the simulators leave the product schema with their rows', () => {
  it('moves the calls and the messages, as UTC, and drops the tables of before', async () => {
    await db.sql(TABLES_OF_BEFORE);
    await db.sql(migration('20261207093000_simulated_carrier_own_schema'));
    await db.sql(migration('20261207094000_simulated_whatsapp_sender_own_schema'));

    expect(await simulatedCarrierRecord(db).call('"providerCallId" = $1', 'sim_before')).toMatchObject({
      attemptId: 'lead-1:1',
      outcome: 'busy',
      eventsDelivered: 3,
      createdAt: new Date('2026-12-01T10:00:00.250Z'),
      hangupAt: new Date('2026-12-01T10:00:01.500Z'),
      lead: { name: 'Ana', fields: {} },
      statusCallbackEvents: ['in-progress'],
    });
    expect(await db.sql(`SELECT * FROM ${SIMULATED_WHATSAPP_SENDER_TABLES.messages}`)).toEqual([
      expect.objectContaining({
        id: '00000000-0000-4000-8000-000000000001',
        messageKey: 'journey:run:node:1',
        parameters: ['Ana'],
        createdAt: new Date('2026-12-01T10:00:00.000Z'),
      }),
    ]);
    expect(
      await db.sql(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'
           AND table_name IN ('SimulatedProviderCall', 'SimulatedMessage')`,
      ),
    ).toEqual([]);
  });

  it('leaves the carrier and the sender going on with what was moved', async () => {
    const carrier = await startTestCarrier(db);
    expect(await carrier.client.lookup({ attemptId: 'lead-1:1' })).toMatchObject({
      providerCallId: 'sim_before',
      // A number ending in 5 is busy; long over (its hangup came after), so its end is due.
      status: 'busy',
    });
    // A retried send of a message of before finds it under its key instead of sending again.
    const sender = createSimulatedWhatsApp(db);
    const message = {
      messageKey: 'journey:run:node:1',
      workspaceId: '00000000-0000-4000-8000-000000000002',
      to: '+14155550129',
      templateName: 'welcome',
      language: 'en',
      parameters: ['Ana'],
    };
    expect(await sender.sendTemplate(message)).toEqual({
      messageId: '00000000-0000-4000-8000-000000000001',
      status: 'failed',
    });
    const sent = await sender.sendTemplate({ ...message, messageKey: 'journey:run:node:2', to: '+14155550120' });
    expect(sent.status).toBe('sent');
    expect(await sender.sendTemplate({ ...message, messageKey: 'journey:run:node:2' })).toEqual(sent);
  });
});
