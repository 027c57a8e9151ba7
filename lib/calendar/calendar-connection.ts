import { randomUUID } from 'node:crypto';
import type { CalendarConnection } from '../../generated/prisma/client';
import type { Database } from '../database';
import { ConflictError, NotFoundError } from '../operator-refusals';
import { boundAdditionalData, openBound } from '../secrets/binding';
import { seal } from '../secrets/envelope';
import type { Keyring } from '../secrets/keyring';
import { envelopeColumns, envelopeFromColumns, type SealedRowKind } from '../secrets/sealed-rows';
import type { Envelope } from '../secrets/envelope';
import { GOOGLE_TOKEN_URL, parseServiceAccountKey, type ServiceAccountKey } from '../sheets/service-account-key';

/**
 * A workspace's calendar connection (docs/features/calendar.md#the-connection). `-twin` providers are the same code
 * against the local twins, whose base URLs the deployment names (GOOGLE_CALENDAR_TWIN_URL, CALCOM_TWIN_URL), recorded
 * under the twins' names; a real provider's base URL is fixed (Google's, Cal.com's), never typed by anyone.
 */
export const CALENDAR_PROVIDERS = ['google-calendar', 'google-calendar-twin', 'calcom', 'calcom-twin'] as const;
export type CalendarProvider = (typeof CALENDAR_PROVIDERS)[number];

export const isGoogleProvider = (provider: CalendarProvider) => provider.startsWith('google-calendar');

/** Where the twins listen (lib/config.ts): a `-twin` connection is refused where its twin is not configured. */
export interface CalendarEndpoints {
  googleCalendarTwinUrl?: string;
  calcomTwinUrl?: string;
}

/** Appointments last 5 minutes to 8 hours. */
export const DURATION_MINUTES = { min: 5, max: 480, default: 30 } as const;

export interface CalendarConnectRequest {
  workspaceId: string;
  provider: CalendarProvider;
  /** google: the service account's JSON key. */
  keyJson?: string;
  /** google: the calendar booked. */
  calendarId?: string;
  /** google: the user the account acts for (domain-wide delegation). */
  subject?: string;
  /** calcom: the API key (cal_...). */
  apiKey?: string;
  /** calcom: the event type booked. */
  eventTypeId?: number;
  durationMinutes?: number;
  /** google: the IANA zone of the host's working hours (default UTC). */
  hostTimeZone?: string;
}

/** A connection as it may be shown: never the credential, nor a part of it. */
export interface CalendarConnectionView {
  id: string;
  provider: CalendarProvider;
  calendarId: string | null;
  subject: string | null;
  serviceAccountEmail: string | null;
  eventTypeId: number | null;
  durationMinutes: number;
  hostTimeZone: string;
  createdAt: string;
}

export const calendarConnectionView = (row: CalendarConnection): CalendarConnectionView => ({
  id: row.id,
  provider: row.provider as CalendarProvider,
  calendarId: row.calendarId,
  subject: row.subject,
  serviceAccountEmail: row.serviceAccountEmail,
  eventTypeId: row.eventTypeId,
  durationMinutes: row.durationMinutes,
  hostTimeZone: row.hostTimeZone,
  createdAt: row.createdAt.toISOString(),
});

/** What the envelope is bound to: the row, its workspace and its provider (lib/secrets/binding.ts). */
const additionalDataOf = (row: { workspaceId: string; id: string; provider: string }) =>
  boundAdditionalData({ kind: 'calendar-connection', ...row, address: null });

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function googleKeyOf(text: string | undefined): ServiceAccountKey {
  if (!text) throw new ConflictError('a Google Calendar connection needs the service account JSON key (--key-file)');
  try {
    return parseServiceAccountKey(text);
  } catch (error) {
    throw new ConflictError((error as Error).message);
  }
}

/**
 * `calendar connect` (an operator's command: signing in to a calendar is refused to keys, spec section 5): the
 * workspace's connection, replacing the one it had (its holds go with it; its appointments stay).
 */
export async function connectCalendar(
  db: Database,
  keyring: Keyring,
  endpoints: CalendarEndpoints,
  request: CalendarConnectRequest,
): Promise<CalendarConnectionView> {
  const google = isGoogleProvider(request.provider);
  if (request.provider === 'google-calendar-twin' && !endpoints.googleCalendarTwinUrl)
    throw new ConflictError('google-calendar-twin needs GOOGLE_CALENDAR_TWIN_URL in the deployment');
  if (request.provider === 'calcom-twin' && !endpoints.calcomTwinUrl)
    throw new ConflictError('calcom-twin needs CALCOM_TWIN_URL in the deployment');
  const durationMinutes = request.durationMinutes ?? DURATION_MINUTES.default;
  if (
    !Number.isInteger(durationMinutes) ||
    durationMinutes < DURATION_MINUTES.min ||
    durationMinutes > DURATION_MINUTES.max
  )
    throw new ConflictError(`--duration-minutes must be ${DURATION_MINUTES.min} to ${DURATION_MINUTES.max}`);
  const hostTimeZone = request.hostTimeZone ?? 'UTC';
  if (!isTimeZone(hostTimeZone))
    throw new ConflictError('--host-time-zone must be an IANA time zone (e.g. America/New_York)');
  let secret: string;
  let serviceAccountEmail: string | null = null;
  if (google) {
    const key = googleKeyOf(request.keyJson);
    // The JWT is posted to the key's token_uri: a real connection's must be Google's.
    if (request.provider === 'google-calendar' && key.token_uri !== GOOGLE_TOKEN_URL)
      throw new ConflictError(`a google-calendar key must have token_uri ${GOOGLE_TOKEN_URL}`);
    if (!request.calendarId?.trim()) throw new ConflictError('a Google Calendar connection needs --calendar-id');
    secret = JSON.stringify(key);
    serviceAccountEmail = key.client_email;
  } else {
    if (!request.apiKey?.trim()) throw new ConflictError('a Cal.com connection needs its API key (--api-key-file)');
    if (!Number.isInteger(request.eventTypeId) || request.eventTypeId! <= 0)
      throw new ConflictError('a Cal.com connection needs --event-type-id');
    secret = request.apiKey.trim();
  }
  const workspace = await db.workspace.findFirst({
    where: { id: request.workspaceId, deletedAt: null },
    select: { id: true },
  });
  if (!workspace) throw new NotFoundError(`workspace ${request.workspaceId} not found`);
  const id = randomUUID();
  const envelope = seal(
    keyring,
    secret,
    additionalDataOf({ workspaceId: request.workspaceId, id, provider: request.provider }),
  );
  const data = {
    id,
    workspaceId: request.workspaceId,
    provider: request.provider,
    calendarId: google ? request.calendarId!.trim() : null,
    subject: google ? (request.subject?.trim() ?? null) : null,
    serviceAccountEmail,
    eventTypeId: google ? null : request.eventTypeId!,
    durationMinutes,
    hostTimeZone,
    ...envelopeColumns(envelope),
  };
  const row = await db.$transaction(async (tx) => {
    await tx.calendarConnection.deleteMany({ where: { workspaceId: request.workspaceId } });
    await tx.calendarHold.deleteMany({ where: { workspaceId: request.workspaceId } });
    return tx.calendarConnection.create({ data });
  });
  return calendarConnectionView(row);
}

export async function calendarConnectionOf(db: Database, workspaceId: string): Promise<CalendarConnectionView | null> {
  const row = await db.calendarConnection.findUnique({ where: { workspaceId } });
  return row ? calendarConnectionView(row) : null;
}

/** Removes the workspace's connection, its credential with it, and its holds; answers whether there was one. */
export async function disconnectCalendar(db: Database, workspaceId: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const { count } = await tx.calendarConnection.deleteMany({ where: { workspaceId } });
    await tx.calendarHold.deleteMany({ where: { workspaceId } });
    return count > 0;
  });
}

/** A connection opened for its provider: the settings and the credential in clear (never logged, never answered). */
export interface OpenedCalendar {
  id: string;
  workspaceId: string;
  provider: CalendarProvider;
  calendarId: string | null;
  subject: string | null;
  eventTypeId: number | null;
  durationMinutes: number;
  hostTimeZone: string;
  /** google: the service account's JSON key; calcom: the API key. */
  secret: string;
}

/** The workspace's connection, opened; null when it has none. */
export async function openCalendar(
  db: Database,
  keyring: Keyring,
  workspaceId: string,
): Promise<OpenedCalendar | null> {
  const row = await db.calendarConnection.findUnique({ where: { workspaceId } });
  const envelope = row && envelopeFromColumns(row);
  if (!row || !envelope) return null;
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    provider: row.provider as CalendarProvider,
    calendarId: row.calendarId,
    subject: row.subject,
    eventTypeId: row.eventTypeId,
    durationMinutes: row.durationMinutes,
    hostTimeZone: row.hostTimeZone,
    secret: openBound(keyring, envelope, additionalDataOf(row)),
  };
}

/** `secrets rekey`: every connection's envelope moved to the ring's current key (docs/providers.md#rotating-the-key-ring). */
export const calendarConnectionRows: SealedRowKind<CalendarConnection> = {
  async idsNotUnder(db, keyId) {
    const rows = await db.calendarConnection.findMany({
      where: { secretKeyId: keyId === null ? { not: null } : { not: keyId } },
      select: { id: true },
      orderBy: { createdAt: 'asc' },
    });
    return rows.map((row) => row.id);
  },
  async lockLive(tx, id) {
    const rows = await tx.$queryRawUnsafe<CalendarConnection[]>(
      `SELECT * FROM "CalendarConnection" WHERE id = $1::uuid FOR UPDATE`,
      id,
    );
    return rows[0] ?? null;
  },
  additionalDataOf,
  async replaceEnvelope(tx, id, envelope: Envelope) {
    await tx.calendarConnection.update({ where: { id }, data: envelopeColumns(envelope) });
  },
};
