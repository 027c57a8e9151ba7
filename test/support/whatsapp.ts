import { afterAll } from 'vitest';
import type { Database } from '../../lib/database';
import type { WhatsAppProvider } from '../../lib/whatsapp/provider';
import { createSimulatedWhatsAppClient, simulateInboundMessage } from '../../lib/whatsapp/graph-client';
import { createSimulatedWhatsAppProvider, type SimulatedWhatsAppProvider } from '../../simulators/whatsapp/server';

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
    db,
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
  };
}
