import { afterAll } from 'vitest';
import type { Carrier } from '../../lib/calls/carrier';
import type { Database } from '../../lib/database';
import type { CallEvent } from '../../lib/calls/call-event';
import type { SubscribableProgressState } from '../../lib/calls/call-states';
import { createSimulatedCarrierClient } from '../../lib/simulated-carrier/client';
import { createSimulatedCarrier, type SimulatedCarrier } from '../../simulators/simulated-carrier/server';
import { SIMULATED_CARRIER_TABLES, type SimulatedCarrierCall } from '../../simulators/simulated-carrier/call-store';

/** What the test APIs check simulated events against (startTestApi) and the test carriers sign with. */
export const TEST_CARRIER_SIGNING_SECRET = 'test-simulated-carrier-signing-secret';
/** A 40 s simulated call lasts 40 ms. */
export const TEST_TIME_SCALE = 0.001;

export interface TestCarrier {
  server: SimulatedCarrier;
  /** The Carrier a worker dials through: over real HTTP to the server. */
  client: Carrier;
  baseUrl: string;
}

/**
 * The simulated carrier as the tests run it: an in-process HTTP server on a free loopback port over the
 * test file's database, closed at the end of the file. Events that are not answered 2xx are retried
 * quickly (50 ms, doubling up to 1 s).
 */
export async function startTestCarrier(
  db: Database,
  options: { timeScale?: number; sendsEvent?: (event: CallEvent) => boolean; port?: number } = {},
): Promise<TestCarrier> {
  const server = createSimulatedCarrier({
    sql: db.sql,
    signingSecret: TEST_CARRIER_SIGNING_SECRET,
    timeScale: options.timeScale ?? TEST_TIME_SCALE,
    retry: { firstMs: 50, maxMs: 1_000 },
    sendsEvent: options.sendsEvent,
  });
  const baseUrl = await server.listen(options.port ?? 0);
  afterAll(() => server.close());
  return { server, client: createSimulatedCarrierClient({ baseUrl }), baseUrl };
}

/** A worker's carrier dependencies: dial through this carrier, events to this API. */
export const carrierDependencies = (
  carrier: TestCarrier,
  api: { baseUrl: string },
  statusCallbackEvents?: readonly SubscribableProgressState[],
) => ({
  calls: carrier.client,
  statusCallbackBaseUrl: api.baseUrl,
  ...(statusCallbackEvents && { statusCallbackEvents }),
});

/**
 * What the simulated carrier holds in its own schema (simulators/simulated-carrier/call-store.ts), read as the tests
 * look at it: a call by a condition over its columns, all such calls, how many.
 */
export const simulatedCarrierRecord = (db: Pick<Database, 'sql'>) => ({
  async call(condition: string, ...values: unknown[]): Promise<SimulatedCarrierCall> {
    const [row] = await db.sql<SimulatedCarrierCall>(
      `SELECT * FROM ${SIMULATED_CARRIER_TABLES.calls} WHERE ${condition} LIMIT 1`,
      ...values,
    );
    if (!row) throw new Error(`the simulated carrier holds no call where ${condition}`);
    return row;
  },
  calls: (condition = 'true', ...values: unknown[]) =>
    db.sql<SimulatedCarrierCall>(
      `SELECT * FROM ${SIMULATED_CARRIER_TABLES.calls} WHERE ${condition} ORDER BY "createdAt"`,
      ...values,
    ),
  async count(condition = 'true', ...values: unknown[]): Promise<number> {
    const [row] = await db.sql<{ count: number }>(
      `SELECT count(*)::int AS count FROM ${SIMULATED_CARRIER_TABLES.calls} WHERE ${condition}`,
      ...values,
    );
    return row!.count;
  },
});
