import { z } from 'zod';
import { atMostCodePoints } from '../code-point-length';
import { CARRIER_CALL_STATES } from './call-states';

/**
 * One status event of a call, as a carrier POSTs it to /telephony/{provider}/events (the simulated
 * carrier sends exactly this, from its own copy of the shape, simulators/simulated-carrier/protocol.ts; an adapter of
 * a real carrier maps its own callback to it).
 */
export const callEventSchema = z.object({
  eventId: z
    .string()
    .min(1)
    .check(atMostCodePoints(200))
    .describe("The carrier's id of this event: a second delivery changes nothing."),
  providerCallId: z
    .string()
    .min(1)
    .check(atMostCodePoints(200))
    .describe("The carrier's id of the call, as dial answered it."),
  attemptId: z
    .string()
    .min(1)
    .check(atMostCodePoints(200))
    .optional()
    .describe('The attempt id the call was dialed with (the call is found by it until the dial has answered).'),
  status: z.enum(CARRIER_CALL_STATES).describe('The state the event reports (a call never moves backwards).'),
  answeredBy: z
    .enum(['human', 'machine'])
    .nullable()
    .optional()
    .describe('Answering-machine detection, once answered.'),
  durationMs: z.number().int().min(0).nullable().optional().describe('Talk time, on a terminal event.'),
  reason: z
    .string()
    .check(atMostCodePoints(200))
    .nullable()
    .optional()
    .describe('Why a call failed; invalid_number maps to the outcome invalid_number.'),
  occurredAt: z
    .string()
    .datetime({ offset: true })
    // PostgreSQL refuses the year 0 (its calendar goes from 1 BC to 1 AD), which the ISO format allows: without this
    // such an event failed its statement (a 500) instead of a 400.
    .refine((value) => !value.startsWith('0000-'), 'The year 0 is not a date PostgreSQL keeps.')
    .describe('When the carrier saw the state change.'),
});

export type CallEvent = z.infer<typeof callEventSchema>;
