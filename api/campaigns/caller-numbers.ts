import { ZodError } from 'zod';
import { assertCallerNumbersConnected } from '../../lib/carrier-connections/simulator-stand-in';
import { storedCapabilities } from '../../lib/phone-numbers/phone-numbers';
import { prismaSql } from '../../lib/run-sql';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { phoneNumbersOfWorkspace } from './campaign-store';

/**
 * A campaign places calls only from numbers of its own workspace that take calls: each of callerNumbers
 * (already E.164) must be assigned to the caller's workspace with voice capability. Otherwise the body is
 * refused as invalid_body, with one issue per number naming its index; another workspace's number and a
 * number nobody holds get the same message, so nothing leaks about other workspaces. While SIMULATORS is disabled, each
 * must also be bound to a live carrier connection (409 no_carrier_connection naming the first that is not).
 */
export async function checkCallerNumbers(
  { db, simulators }: Pick<AppServices, 'db' | 'simulators'>,
  principal: Principal,
  callerNumbers: readonly string[] | undefined,
): Promise<void> {
  if (!callerNumbers?.length) return;
  const owned = await phoneNumbersOfWorkspace(db, principal.workspaceId, callerNumbers);
  const takesCalls = new Map(owned.map((number) => [number.e164, storedCapabilities(number.capabilities).voice]));
  const issues = callerNumbers.flatMap((e164, index) => {
    const voice = takesCalls.get(e164);
    if (voice) return [];
    const message =
      voice === undefined
        ? `${e164} is not a phone number of this workspace (GET /phone-numbers)`
        : `${e164} has no voice capability: calls cannot be placed from it`;
    return [{ code: 'custom' as const, path: ['callerNumbers', index], message, input: e164 }];
  });
  if (issues.length) throw new ZodError(issues);
  // Numbers of the workspace that take calls, but through what? Without simulators, a carrier connection's only.
  await assertCallerNumbersConnected(prismaSql(db), simulators, principal.workspaceId, callerNumbers);
}
