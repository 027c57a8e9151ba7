/**
 * A Meta-shaped webhook body with one status of one outbound message, as the simulated provider posts
 * them (simulators/meta-twin/server.ts): for the WhatsApp webhook bench and its load generator.
 */
export const statusWebhook = (
  account: { phoneNumberId: string; businessAccountId: string },
  message: { wamid: string; recipient: string },
  status: string,
) => ({
  object: 'whatsapp_business_account',
  entry: [
    {
      id: account.businessAccountId,
      changes: [
        {
          field: 'messages',
          value: {
            messaging_product: 'whatsapp',
            metadata: { display_phone_number: account.phoneNumberId, phone_number_id: account.phoneNumberId },
            statuses: [
              {
                id: message.wamid,
                status,
                timestamp: String(Math.floor(Date.now() / 1000)),
                recipient_id: message.recipient,
                pricing: { billable: true, pricing_model: 'PMP', category: 'utility' },
              },
            ],
          },
        },
      ],
    },
  ],
});
