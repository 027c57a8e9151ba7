import { ZodError } from 'zod';
import type { Prisma, SpeechRep, SpeechTeam } from '../../generated/prisma/client';
import type { Database } from '../../lib/database';
import { ErrorCode } from '../../lib/error-codes';
import { isUniqueViolation } from '../../lib/prisma-errors';
import { scorecardSchema, type Scorecard } from '../../lib/speech/scorecard';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { createWithinQuota } from '../campaigns/workspace-quota';

/** Teams are few: GET /speech/teams answers them all at once, so a workspace holds at most this many. */
export const SPEECH_TEAMS_PER_WORKSPACE = 200;

const withRepCount = { _count: { select: { reps: true } } } as const;
type CountedTeam = SpeechTeam & { _count: { reps: number } };

/**
 * Updates or deletes the workspace's row by id in one statement with the workspace in its WHERE clause:
 * when it matched no row (never was, another workspace's, deleted meanwhile), findOwned's 403 forbidden.
 */
async function writeOwned(
  principal: Principal,
  id: string,
  write: (where: { id: string; workspaceId: string }) => Promise<{ count: number }>,
): Promise<void> {
  await findOwned(principal, id, async (where) => ((await write(where)).count > 0 ? true : null));
}

/** The unique index on (workspaceId, name) decides who holds a name: a racing loser gets the 409, never a 500. */
async function claimingTeamName<Row>(write: () => Promise<Row>): Promise<Row> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error))
      throw new Refusal(ErrorCode.speech_team_name_taken, {
        detail: 'another team of this workspace has this name',
      });
    throw error;
  }
}

// --- Teams ----------------------------------------------------------------------------------------

export async function listSpeechTeams({ db }: AppServices, principal: Principal): Promise<CountedTeam[]> {
  return db.speechTeam.findMany({
    where: { workspaceId: principal.workspaceId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    include: withRepCount,
  });
}

/** Creates a team unless the workspace holds SPEECH_TEAMS_PER_WORKSPACE (creates take turns on a lock). */
export async function createSpeechTeam({ db }: AppServices, principal: Principal, name: string) {
  const { workspaceId } = principal;
  return claimingTeamName(() =>
    createWithinQuota(
      db,
      {
        workspaceId,
        noun: 'speech teams',
        limit: SPEECH_TEAMS_PER_WORKSPACE,
        code: ErrorCode.speech_team_limit_reached,
        count: (tx) => tx.speechTeam.count({ where: { workspaceId } }),
      },
      (tx) => tx.speechTeam.create({ data: { workspaceId, name }, include: withRepCount }),
    ),
  );
}

export async function findOwnedSpeechTeam({ db }: AppServices, principal: Principal, id: string) {
  return findOwned(principal, id, (where) => db.speechTeam.findFirst({ where, include: withRepCount }));
}

export async function renameSpeechTeam(services: AppServices, principal: Principal, id: string, name: string) {
  await claimingTeamName(() =>
    writeOwned(principal, id, (where) => services.db.speechTeam.updateMany({ where, data: { name } })),
  );
  return findOwnedSpeechTeam(services, principal, id);
}

/** Its reps stay, without a team (the foreign key sets their teamId to null). */
export async function deleteSpeechTeam({ db }: AppServices, principal: Principal, id: string): Promise<void> {
  await writeOwned(principal, id, (where) => db.speechTeam.deleteMany({ where }));
}

export function speechTeamView(team: CountedTeam) {
  return { id: team.id, name: team.name, repCount: team._count.reps, createdAt: team.createdAt.toISOString() };
}

// --- Reps -----------------------------------------------------------------------------------------

export interface SpeechRepSettings {
  name?: string;
  /** null: none. */
  email?: string | null;
  /** null: no team. */
  teamId?: string | null;
}

/**
 * The team a rep write names (teamId, when given) must be one of the workspace's: else 400 invalid_body at
 * teamId. Locked FOR KEY SHARE until the transaction ends, before the rep is written: a concurrent delete
 * of the team waits for the write, or has happened and the team is not found (never a foreign-key 500).
 */
async function requireTeam(tx: Prisma.TransactionClient, workspaceId: string, teamId: string | null | undefined) {
  if (!teamId) return;
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT 1 FROM "SpeechTeam" WHERE id = ${teamId}::uuid AND "workspaceId" = ${workspaceId}::uuid FOR KEY SHARE`;
  if (!rows.length)
    throw new ZodError([
      { code: 'custom', path: ['teamId'], message: 'no team of this workspace has this id', input: teamId },
    ]);
}

export async function listSpeechReps(
  { db }: AppServices,
  principal: Principal,
  query: { limit: number; offset: number; teamId?: string },
) {
  const where = { workspaceId: principal.workspaceId, ...(query.teamId ? { teamId: query.teamId } : {}) };
  const [rows, total] = await Promise.all([
    db.speechRep.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: query.offset,
      take: query.limit,
    }),
    db.speechRep.count({ where }),
  ]);
  return { items: rows.map(speechRepView), total };
}

export async function createSpeechRep(
  { db }: AppServices,
  principal: Principal,
  input: SpeechRepSettings & { name: string },
) {
  const { workspaceId } = principal;
  return db.$transaction(async (tx) => {
    await requireTeam(tx, workspaceId, input.teamId);
    return tx.speechRep.create({ data: { ...input, workspaceId } });
  });
}

export async function findOwnedSpeechRep({ db }: AppServices, principal: Principal, id: string) {
  return findOwned(principal, id, (where) => db.speechRep.findFirst({ where }));
}

/** Another workspace's rep is refused (403) before the team it names is judged (400). */
export async function updateSpeechRep(
  { db }: AppServices,
  principal: Principal,
  id: string,
  settings: SpeechRepSettings,
) {
  return db.$transaction(async (tx) => {
    await findOwned(principal, id, (where) => tx.speechRep.findFirst({ where, select: { id: true } }));
    await requireTeam(tx, principal.workspaceId, settings.teamId);
    await writeOwned(principal, id, (where) => tx.speechRep.updateMany({ where, data: settings }));
    return tx.speechRep.findUniqueOrThrow({ where: { id } });
  });
}

/** Its analyses stay, without a rep (the foreign key sets their repId to null). */
export async function deleteSpeechRep({ db }: AppServices, principal: Principal, id: string): Promise<void> {
  await writeOwned(principal, id, (where) => db.speechRep.deleteMany({ where }));
}

export function speechRepView(rep: SpeechRep) {
  return { id: rep.id, name: rep.name, email: rep.email, teamId: rep.teamId, createdAt: rep.createdAt.toISOString() };
}

// --- Scorecard ------------------------------------------------------------------------------------

/**
 * What the workspace's recordings are scored against: its stored scorecard, or the defaults. Read again
 * through the schema, so a default added later fills what an older stored scorecard lacks. The upload
 * snapshots it into the analysis.
 */
export async function scorecardOf(db: Database, workspaceId: string): Promise<Scorecard> {
  return (await storedScorecard(db, workspaceId)).scorecard;
}

async function storedScorecard(db: Database, workspaceId: string) {
  const row = await db.speechScorecard.findUnique({ where: { workspaceId } });
  // Not a ZodError when a stored scorecard no longer parses (a rule tightened since): a fault of ours, not a bad request.
  const parsed = scorecardSchema.safeParse(row?.scorecard ?? {});
  if (!parsed.success) throw new Error(`the stored speech scorecard of workspace ${workspaceId} no longer parses`);
  return { scorecard: parsed.data, updatedAt: row?.updatedAt ?? null };
}

export async function readScorecard({ db }: AppServices, principal: Principal) {
  return scorecardView(await storedScorecard(db, principal.workspaceId));
}

/** Replaces the workspace's scorecard with one the route has parsed (defaults filled). */
export async function replaceScorecard({ db }: AppServices, principal: Principal, scorecard: Scorecard) {
  const { workspaceId } = principal;
  const row = await db.speechScorecard.upsert({
    where: { workspaceId },
    create: { workspaceId, scorecard },
    update: { scorecard },
  });
  return scorecardView({ scorecard, updatedAt: row.updatedAt });
}

function scorecardView({ scorecard, updatedAt }: { scorecard: Scorecard; updatedAt: Date | null }) {
  return { ...scorecard, updatedAt: updatedAt?.toISOString() ?? null };
}
