/**
 * The customer-service window of the WhatsApp Business Platform: for 24 hours after the contact's last
 * inbound message, the business may send free-form messages; outside it, only templates (the platform's
 * 131047 re-engagement error). docs/features/whatsapp/sending.md.
 */
export const CUSTOMER_SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** When the window the last inbound message opened closes (null: the contact never wrote), and whether it is open at `now`. */
export function customerServiceWindow(lastInboundAt: Date | null, now: Date = new Date()) {
  if (!lastInboundAt) return { open: false, expiresAt: null };
  const expiresAt = new Date(lastInboundAt.getTime() + CUSTOMER_SERVICE_WINDOW_MS);
  return { open: now.getTime() < expiresAt.getTime(), expiresAt };
}
