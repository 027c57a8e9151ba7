import type { SimulatorsSetting } from '../simulators';
import { ErrorCode } from '../error-codes';
import { Refusal } from '../refusal';
import type { RunSql } from '../run-sql';
import { unboundNumbers } from './carrier-store';

/**
 * The refusal of a caller number bound to no live carrier connection while SIMULATORS is disabled
 * (docs/configuration.md#simulators): nothing would place its calls but the simulated carrier, which does not run in
 * production. null: the workspace named no caller number at all.
 */
export const unboundCallerRefusal = (e164: string | null) =>
  new Refusal(ErrorCode.no_carrier_connection, {
    e164,
    detail:
      e164 === null
        ? 'no caller number: give the campaign (callerNumbers) or the test call (from) a number bound to a carrier connection (number assign --carrier-connection)'
        : `${e164} is bound to no carrier connection of this workspace, and simulated calls are disabled: bind it (number assign --carrier-connection) or use another number`,
  });

/**
 * While SIMULATORS is disabled, every number calls would be placed from must be bound to a live carrier connection of
 * the workspace: the first that is not is refused (409 no_carrier_connection naming it). Enabled: the simulated carrier
 * places the calls of the others, and nothing is refused.
 */
export async function assertCallerNumbersConnected(
  sql: RunSql,
  simulators: SimulatorsSetting,
  workspaceId: string,
  e164s: readonly string[],
): Promise<void> {
  if (simulators !== 'disabled') return;
  const [unbound] = await unboundNumbers(sql, workspaceId, e164s);
  if (unbound !== undefined) throw unboundCallerRefusal(unbound);
}
