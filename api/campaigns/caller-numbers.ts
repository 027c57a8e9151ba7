import { ZodError } from 'zod';
import { storedCapabilities } from '../../lib/phone-numbers/phone-numbers';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { phoneNumbersOfWorkspace } from './campaign-store';

/**
 * A campaign places calls only from numbers of its own workspace that take calls: each of callerNumbers
 * (already E.164) must be assigned to the caller's workspace with voice capability. Otherwise the body is
 * refused as invalid_body, with one issue per number naming its index; another workspace's number and a
 * number nobody holds get the same message, so nothing leaks about other workspaces.
 */
export async function checkCallerNumbers(
  db: AppServices['db'],
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
}
