import { creditUnits } from './money';

/**
 * The one price table of billed operations (docs/features/credits.md), in credits. Changing a price is a change of
 * this table; the ledger keeps what each operation was charged.
 *
 * | operation            | charged per                                       | price  |
 * | -------------------- | ------------------------------------------------- | ------ |
 * | test_call            | started minute of talk (a call not connected: 0)  | 0.1000 |
 * | recording_analysis   | analysis (a failed analysis: 0)                   | 0.5000 |
 * | whatsapp_message     | message, marketing                                | 0.0500 |
 * | whatsapp_message     | message, utility                                  | 0.0200 |
 * | whatsapp_message     | message, authentication                           | 0.0150 |
 */
export const PRICE_TABLE = {
  test_call: { per: 'started minute', price: '0.1000' },
  recording_analysis: { per: 'analysis', price: '0.5000' },
  whatsapp_message: {
    per: 'message',
    price: { marketing: '0.0500', utility: '0.0200', authentication: '0.0150' },
  },
} as const;

export type WhatsAppCategory = keyof (typeof PRICE_TABLE)['whatsapp_message']['price'];

const MINUTE_MS = 60_000;

/** Minutes begun: 1 ms is one minute, 60 000 ms one, 60 001 ms two; nothing connected is none. */
export const startedMinutes = (durationMs: number | null): number =>
  durationMs === null || durationMs <= 0 ? 0 : Math.ceil(durationMs / MINUTE_MS);

/** The price of a test call of this duration, in ten-thousandths. */
export const testCallPriceUnits = (durationMs: number | null): number =>
  startedMinutes(durationMs) * creditUnits(PRICE_TABLE.test_call.price);

/** The price of one minute of test call, in ten-thousandths. */
export const testCallMinuteUnits = (): number => creditUnits(PRICE_TABLE.test_call.price);

/** The price of one recording analysis, in ten-thousandths. */
export const recordingAnalysisPriceUnits = (): number => creditUnits(PRICE_TABLE.recording_analysis.price);

/** The price of one WhatsApp message of a category, in ten-thousandths. */
export const whatsAppMessagePriceUnits = (category: WhatsAppCategory): number =>
  creditUnits(PRICE_TABLE.whatsapp_message.price[category]);
