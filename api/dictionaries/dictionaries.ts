import type { Dictionary } from '../../generated/prisma/client';
import { isRecordMissing, isUniqueViolation } from '../../lib/prisma-errors';
import { charCountOf, DICTIONARY_LIMITS } from '../../lib/dictionaries/dictionary-terms';
import { ErrorCode } from '../../lib/error-codes';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { createWithinQuota } from '../campaigns/workspace-quota';
import {
  deleteDictionaryWhere,
  dictionariesOfWorkspace,
  dictionaryCount,
  dictionaryWhere,
  insertDictionary,
  updateDictionaryWhere,
} from './dictionary-store';

/** What a caller sets. Terms arrive normalised and deduplicated (lib/dictionaries/dictionary-terms.ts, applied by the route's schema). */
export interface DictionarySettings {
  name?: string;
  description?: string;
  terms?: string[];
  /** null: none. */
  externalId?: string | null;
}

export interface NewDictionary extends DictionarySettings {
  name: string;
}

const externalIdTaken = () =>
  new Refusal(ErrorCode.external_id_taken, {
    detail: 'another dictionary of this workspace has this externalId',
  });

/**
 * The unique index on (workspaceId, externalId) decides who holds an externalId, so two requests racing
 * for one cannot both win: the loser's unique violation (P2002) is the caller's 409, never a 500.
 */
async function claimingExternalId<Row>(write: () => Promise<Row>): Promise<Row> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw externalIdTaken();
    throw error;
  }
}

/** An update or delete of a row that is not there (never was, another workspace's, or deleted meanwhile): no row. */
async function unlessMissing<Row>(write: Promise<Row>): Promise<Row | null> {
  try {
    return await write;
  } catch (error) {
    if (isRecordMissing(error)) return null;
    throw error;
  }
}

/** charCount is the service's to compute, from the terms it stores. */
function storable(settings: DictionarySettings) {
  return { ...settings, ...(settings.terms ? { charCount: charCountOf(settings.terms) } : {}) };
}

/**
 * Creates a dictionary unless the workspace already holds DICTIONARY_LIMITS.dictionariesPerWorkspace.
 * Creates in one workspace take turns on an advisory lock, so concurrent ones cannot pass the limit together.
 */
export async function createDictionary({ db }: AppServices, principal: Principal, input: NewDictionary) {
  const { workspaceId } = principal;
  return claimingExternalId(() =>
    createWithinQuota(
      db,
      {
        workspaceId,
        noun: 'dictionaries',
        limit: DICTIONARY_LIMITS.dictionariesPerWorkspace,
        code: ErrorCode.dictionary_limit_reached,
        count: (tx) => dictionaryCount(tx, workspaceId),
      },
      (tx) => insertDictionary(tx, { ...storable(input), name: input.name, workspaceId }),
    ),
  );
}

export async function listDictionaries({ db }: AppServices, principal: Principal): Promise<Dictionary[]> {
  return dictionariesOfWorkspace(db, principal.workspaceId);
}

export async function findOwnedDictionary({ db }: AppServices, principal: Principal, id: string) {
  return findOwned(principal, id, (where) => dictionaryWhere(db, where));
}

/** One statement: the workspace is in its WHERE clause, so another workspace's dictionary is never touched. */
export async function updateDictionary(
  { db }: AppServices,
  principal: Principal,
  id: string,
  settings: DictionarySettings,
) {
  return claimingExternalId(() =>
    findOwned(principal, id, (where) => unlessMissing(updateDictionaryWhere(db, where, storable(settings)))),
  );
}

/** A hard delete: the AgentDictionary rows go with it (ON DELETE CASCADE), so no agent uses it any more. */
export async function deleteDictionary({ db }: AppServices, principal: Principal, id: string): Promise<void> {
  await findOwned(principal, id, (where) => unlessMissing(deleteDictionaryWhere(db, where)));
}

/** Exactly the spec's dictionary object (section 2). */
export function dictionaryView(dictionary: Dictionary) {
  return {
    id: dictionary.id,
    name: dictionary.name,
    description: dictionary.description,
    terms: dictionary.terms,
    charCount: dictionary.charCount,
    externalId: dictionary.externalId,
    createdAt: dictionary.createdAt.toISOString(),
    updatedAt: dictionary.updatedAt.toISOString(),
  };
}
