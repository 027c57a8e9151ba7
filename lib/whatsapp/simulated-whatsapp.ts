import type { Database } from '../database';
import type { SentMessage, TemplateMessage, WhatsAppSender } from './sender';

/**
 * `simulated` WhatsApp: nothing leaves the machine. A number whose last digit is 9 (the simulated
 * telephony's invalid number) gets status failed; every other number, sent. Each message is kept in
 * SimulatedMessage under its key, so a retried activity finds its message instead of sending twice.
 */
export function createSimulatedWhatsApp(db: Database): WhatsAppSender {
  return {
    name: 'simulated',
    async sendTemplate(message: TemplateMessage): Promise<SentMessage> {
      const status = message.to.endsWith('9') ? 'failed' : 'sent';
      const row = await db.simulatedMessage.upsert({
        where: { messageKey: message.messageKey },
        update: {},
        create: { ...message, status },
      });
      return { messageId: row.id, status: row.status as SentMessage['status'] };
    },
  };
}
