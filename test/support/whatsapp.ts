import { afterAll } from 'vitest';
import type { Database } from '../../lib/database';
import type { WhatsAppProvider } from '../../lib/whatsapp/provider';
import { createSimulatedWhatsAppClient, simulateInboundMessage } from '../../lib/whatsapp/graph-client';
import { createSimulatedWhatsAppProvider, type SimulatedWhatsAppProvider } from '../../simulators/meta-twin/server';
import { META_TWIN_TABLES, type MessageRow, type TemplateRow } from '../../simulators/meta-twin/store';

/** What the test APIs check simulated WhatsApp webhooks against and the test providers sign with. */
export const TEST_WHATSAPP_APP_SECRET = 'test-simulated-whatsapp-app-secret';
/** A 2 s review takes 2 ms; a message is read 8 ms after it was sent. */
export const TEST_WHATSAPP_TIME_SCALE = 0.001;

export interface TestWhatsApp {
  server: SimulatedWhatsAppProvider;
  /** The WhatsAppProvider the service sends through: over real HTTP to the server. */
  client: WhatsAppProvider;
  baseUrl: string;
  /** The contact `from` writes `text` to the number (POST /simulator/inbound): answers the inbound wamid. */
  reply(phoneNumberId: string, from: string, text: string, name?: string): Promise<{ id: string }>;
  /** The contact `from` taps a template's quick-reply button (Meta's `button` message): answers the inbound wamid. */
  tapButton(phoneNumberId: string, from: string, button: { text: string; payload?: string }): Promise<{ id: string }>;
}

/**
 * The simulated WhatsApp provider as the tests run it: an in-process HTTP server on a free loopback port
 * over the test file's database, closed at the end of the file. Webhooks not answered 2xx are retried
 * quickly (50 ms, doubling up to 1 s).
 */
export async function startTestWhatsApp(
  db: Database,
  options: { webhookUrl: string; appSecret?: string; timeScale?: number; port?: number; messagesPerSecond?: number },
): Promise<TestWhatsApp> {
  const server = createSimulatedWhatsAppProvider({
    sql: db.sql,
    appSecret: options.appSecret ?? TEST_WHATSAPP_APP_SECRET,
    webhookUrl: options.webhookUrl,
    timeScale: options.timeScale ?? TEST_WHATSAPP_TIME_SCALE,
    retry: { firstMs: 50, maxMs: 1_000 },
    messagesPerSecond: options.messagesPerSecond,
  });
  const baseUrl = await server.listen(options.port ?? 0);
  afterAll(() => server.close());
  return {
    server,
    client: createSimulatedWhatsAppClient({ baseUrl }),
    baseUrl,
    reply: (phoneNumberId, from, text, name) =>
      simulateInboundMessage(baseUrl, { phoneNumberId, from, text, ...(name && { name }) }),
    tapButton: (phoneNumberId, from, button) => simulateInboundMessage(baseUrl, { phoneNumberId, from, button }),
  };
}

/**
 * The provider's own record (simulators/meta-twin/store.ts: its schema `meta_twin`, not the product's), as the tests
 * read and age it: one row by id, or how many rows a condition holds for.
 */
export const providerRecord = (db: Pick<Database, 'sql'>) => ({
  async message(id: string): Promise<MessageRow> {
    const [row] = await db.sql<MessageRow>(`SELECT * FROM ${META_TWIN_TABLES.message} WHERE id = $1`, id);
    if (!row) throw new Error(`the provider holds no message ${id}`);
    return row;
  },
  async template(id: string): Promise<TemplateRow> {
    const [row] = await db.sql<TemplateRow>(`SELECT * FROM ${META_TWIN_TABLES.template} WHERE id = $1`, id);
    if (!row) throw new Error(`the provider holds no template ${id}`);
    return row;
  },
  async count(table: keyof typeof META_TWIN_TABLES, condition = 'true', ...values: unknown[]): Promise<number> {
    const [row] = await db.sql<{ count: number }>(
      `SELECT count(*)::int AS count FROM ${META_TWIN_TABLES[table]} WHERE ${condition}`,
      ...values,
    );
    return row!.count;
  },
  /** The condition's messages moved back in time: how a test lets the 24-hour window close. */
  async ageMessages(byMs: number, condition: string, ...values: unknown[]): Promise<void> {
    await db.sql(
      `UPDATE ${META_TWIN_TABLES.message} SET "createdAt" = "createdAt" - make_interval(secs => $1::float8 / 1000) WHERE ${condition}`,
      byMs,
      ...values,
    );
  },
});
