import { CarrierRefusedSetupError, type Carrier } from '../calls/carrier';

/** What a call recorded on no connection records as its provider while SIMULATORS is disabled: nothing placed it. */
export const UNBOUND_CARRIER = 'unbound';

/**
 * The fallback of the connection carrier (lib/carriers/connection-carrier.ts) while SIMULATORS is disabled
 * (docs/configuration.md#simulators): a call from a number bound to no carrier connection is never handed to the
 * simulated carrier. Its dial is refused as the workspace's setup (no_carrier_connection), which pauses its campaign
 * naming the number, and ends a test call failed; the API refuses such a number before (campaign create, edit, start,
 * test calls), so this catches only what changed since, or a journey's call node. Nothing was placed, so nothing is
 * found, hung up or transcribed.
 */
export function createUnboundCarrier(): Carrier {
  return {
    name: UNBOUND_CARRIER,
    dial(request) {
      return Promise.reject(
        new CarrierRefusedSetupError(
          'no_carrier_connection',
          request.from ?? '(no caller number)',
          'the number is bound to no carrier connection, and simulated calls are disabled (SIMULATORS)',
        ),
      );
    },
    lookup: () => Promise.resolve(null),
    hangup: () => Promise.resolve(),
    transcript: () => Promise.resolve(null),
  };
}
