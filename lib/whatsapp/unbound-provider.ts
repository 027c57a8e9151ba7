import { WhatsAppProviderError, type WhatsAppProvider } from './provider';
import type { WhatsAppSender } from './sender';

/** The provider name of the refusing fallback: nothing carries what it is asked. */
export const UNBOUND_WHATSAPP_PROVIDER = 'unbound';

/**
 * Not one of Meta's codes (theirs are positive): the product's own refusal of a sender bound to no Meta connection while
 * SIMULATORS is disabled, recorded as a message's failure code.
 */
export const NO_WHATSAPP_CONNECTION_CODE = 0;

const refused = (what: string) =>
  new WhatsAppProviderError(
    NO_WHATSAPP_CONNECTION_CODE,
    `no_whatsapp_connection: ${what} is bound to no Meta connection, and simulated messages are disabled (SIMULATORS)`,
    409,
  );

/**
 * The fallback of the connection provider (lib/whatsapp/connection-provider.ts) while SIMULATORS is disabled
 * (docs/configuration.md#simulators): a sender or Business Account bound to no live Meta connection is never handed to
 * the simulated provider. A send is refused for good (a 409 refusal: the message fails, its hold is released), as is a
 * template submission or review; the API refuses such a sender before (sends, a campaign's messaging and start), so
 * this catches only what changed since, a journey's message node or an order notification.
 */
export function createUnboundWhatsAppProvider(): WhatsAppProvider {
  const send = (request: { phoneNumberId: string }) =>
    Promise.reject(refused(`the sender of phone_number_id ${request.phoneNumberId}`));
  return {
    name: UNBOUND_WHATSAPP_PROVIDER,
    sendMessage: send,
    prepareSend: (request) => Promise.resolve(() => send(request)),
    submitTemplate: (submission) =>
      Promise.reject(refused(`the WhatsApp Business Account ${submission.businessAccountId}`)),
    getTemplate: (templateId) => Promise.reject(refused(`the template ${templateId}'s account`)),
  };
}

/**
 * The embedded sender of journey runs recorded before patch whatsapp-node-provider (lib/whatsapp/simulated-whatsapp.ts)
 * while SIMULATORS is disabled: such a run's message node is answered failed, never simulated.
 */
export function createUnboundWhatsAppSender(): WhatsAppSender {
  return {
    name: UNBOUND_WHATSAPP_PROVIDER,
    sendTemplate: (message) => Promise.resolve({ messageId: `unbound:${message.messageKey}`, status: 'failed' }),
  };
}
