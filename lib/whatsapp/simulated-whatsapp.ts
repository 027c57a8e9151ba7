import type { Database } from '../database';
import type { SentMessage, TemplateMessage, WhatsAppSender } from './sender';
import { simulatedWhatsAppStore } from './simulated-whatsapp-store';

/**
 * `simulated` WhatsApp, embedded: nothing leaves the machine. A number whose last digit is 9 (the simulated
 * telephony's invalid number) gets status failed; every other number, sent. Each message is kept under its key in the
 * sender's own schema (simulated-whatsapp-store.ts), so a retried activity finds its message instead of sending twice.
 * Only a journey's whatsapp node of a run recorded before patch whatsapp-node-provider sends through it (every other
 * message goes to a WhatsApp provider over HTTP: lib/whatsapp/provider.ts).
 */
export function createSimulatedWhatsApp(db: Pick<Database, 'sql'>): WhatsAppSender {
  const store = simulatedWhatsAppStore(db.sql);
  return {
    name: 'simulated',
    async sendTemplate(message: TemplateMessage): Promise<SentMessage> {
      const row = await store.recordOnce(message, message.to.endsWith('9') ? 'failed' : 'sent');
      return { messageId: row.id, status: row.status };
    },
  };
}
