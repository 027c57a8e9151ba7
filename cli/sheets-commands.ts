import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Database } from '../lib/database';
import { ConflictError as StateConflict } from '../lib/operator-refusals';
import {
  attachSpreadsheet,
  connectSheets,
  detachSpreadsheet,
  listSheetConnections,
  rekeySheetConnections,
  removeSheetConnection,
  rotateSheetKey,
  sheetBaseUrlSchema,
  spreadsheetIdSchema,
} from '../lib/sheets/connections';
import { SHEET_PROVIDERS } from '../lib/sheets/opened-connection';
import { asUsageOfState, parseFlags, UsageError } from './commands';
import { rekeyAnswer } from './rekey';
import { resolveKeyring } from './secrets-keys';

type Flags = Record<string, string | boolean | undefined>;
type Command = (db: Database, flags: Flags) => Promise<Record<string, unknown>>;

const uuid = z.string().uuid();

/**
 * A service account's JSON key, from one of `--key-file PATH` (as the Google Cloud console downloads it), `--key-stdin`
 * (all of standard input) or `--key-env VAR`. Never on the command line itself: it is a private key.
 */
const keyFlags = {
  'key-file': z.string().min(1).optional(),
  'key-stdin': z.literal(true).optional(),
  'key-env': z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable')
    .optional(),
};

function readKey(flags: { 'key-file'?: string; 'key-stdin'?: true; 'key-env'?: string }): string {
  const given = (['key-file', 'key-stdin', 'key-env'] as const).filter((name) => flags[name] !== undefined);
  if (given.length === 0) throw new UsageError('--key-file is required (or --key-stdin, --key-env VAR)');
  if (given.length > 1) throw new UsageError(`--${given[1]}: give the key one way only`);
  let text: string | undefined;
  if (flags['key-file']) {
    try {
      text = readFileSync(flags['key-file'], 'utf8');
    } catch (error) {
      throw new UsageError(`--key-file: ${(error as NodeJS.ErrnoException).code ?? 'cannot be read'}`);
    }
  } else if (flags['key-stdin']) text = readFileSync(0, 'utf8');
  else text = process.env[flags['key-env']!];
  if (!text?.trim()) throw new UsageError(`--${given[0]}: empty`);
  return text;
}

/** A key refused for what it holds (not JSON, not a service account's) is bad input, as the CLI reports it. */
async function asUsageOfKey<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await asUsageOfState(action);
  } catch (error) {
    if (error instanceof StateConflict && /^the (service account key|key is of)|^a google-twin/.test(error.message))
      throw new UsageError(error.message);
    throw error;
  }
}

/** `sheets connect|list|rotate|rekey|remove` and `sheet attach|detach` (docs/features/sheets.md#connecting). */
export const sheetsCommands: Record<string, Command> = {
  'sheets connect': async (db, raw) => {
    const flags = parseFlags(
      {
        workspace: uuid,
        provider: z.enum(SHEET_PROVIDERS),
        label: z.string().trim().min(1).max(200).optional(),
        'base-url': sheetBaseUrlSchema.optional(),
        ...keyFlags,
      },
      raw,
    );
    const keyJson = readKey(flags);
    return asUsageOfKey(() =>
      connectSheets(db, resolveKeyring(), {
        workspaceId: flags.workspace,
        provider: flags.provider,
        label: flags.label,
        baseUrl: flags['base-url'],
        keyJson,
      }),
    );
  },
  'sheets list': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid }, raw);
    return { connections: await listSheetConnections(db, flags.workspace) };
  },
  'sheets rotate': async (db, raw) => {
    const flags = parseFlags({ connection: uuid, ...keyFlags }, raw);
    const keyJson = readKey(flags);
    return asUsageOfKey(() => rotateSheetKey(db, resolveKeyring(), flags.connection, keyJson));
  },
  'sheets rekey': async (db, raw) => {
    parseFlags({}, raw);
    return rekeyAnswer('connection', await rekeySheetConnections(db, resolveKeyring()));
  },
  'sheets remove': async (db, raw) => {
    const flags = parseFlags({ connection: uuid }, raw);
    return removeSheetConnection(db, flags.connection);
  },
  'sheet attach': async (db, raw) => {
    const flags = parseFlags({ campaign: uuid, connection: uuid, spreadsheet: spreadsheetIdSchema }, raw);
    const attached = await attachSpreadsheet(db, {
      campaignId: flags.campaign,
      connectionId: flags.connection,
      spreadsheetId: flags.spreadsheet,
    });
    return {
      ...attached,
      note: 'written from scratch at the next sync; POST /campaigns/{id}/sheet/sync starts it now',
    };
  },
  'sheet detach': async (db, raw) => {
    const flags = parseFlags({ campaign: uuid }, raw);
    return detachSpreadsheet(db, flags.campaign);
  },
};
