import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import { mp3Of, recordedLinesOf, spokenWav, type LoggedLine } from '../twin-common/spoken-audio';
import { type TwinSql, twinSchemaBatch } from '../twin-common/sql';
import { TELNYX_TWIN_SCHEMA, TELNYX_TWIN_TABLES, type TelnyxTwinCall } from './call-store';
import type { TwinCallRecording } from './calls';
import { TELNYX_ERRORS } from './errors';

/**
 * Call recordings on the twin (docs/features/carriers/twins.md#recordings), as Telnyx describes them: started on an
 * answered call by record_start (calls.ts: `format` wav or mp3, `channels` single or dual), saved at the call's end with
 * call.recording.saved (signed like every webhook; it names neither the recording nor the call's id), then listed
 * (GET /v2/recordings, filtered by call_control_id, call_leg_id or call_session_id, paged), read
 * (GET /v2/recordings/{id}) and deleted (DELETE /v2/recordings/{id}). Their audio, at download URLs that expire
 * (presigned: no credentials), is the call's lines spoken by espeak-ng (twin-common/spoken-audio.ts).
 */

const DELETED = `${TELNYX_TWIN_SCHEMA}.deleted_recordings`;
const SCHEMA_SQL = twinSchemaBatch(
  TELNYX_TWIN_SCHEMA,
  `
CREATE TABLE IF NOT EXISTS ${DELETED} (id text PRIMARY KEY, account text NOT NULL, "deletedAt" timestamptz NOT NULL DEFAULT now());
`,
  DELETED,
);

/** How long a download URL opens the file: Telnyx's presigned URLs last minutes. */
const DOWNLOAD_URL_LIFETIME_MS = 10 * 60_000;
/** The most calls a listing reads (a twin's account holds a test's calls). */
const LISTING_CAP = 1_000;
const FILTERS = ['call_control_id', 'call_leg_id', 'call_session_id'] as const;
const FILTER_COLUMNS: Record<(typeof FILTERS)[number], string> = {
  call_control_id: '"callControlId"',
  call_leg_id: '"callLegId"',
  call_session_id: '"callSessionId"',
};

type Saved = TwinCallRecording & { endMs: number };
const savedOf = (call: TelnyxTwinCall): Saved[] =>
  ((call.state as { recordings?: TwinCallRecording[] }).recordings ?? []).filter(
    (recording): recording is Saved => recording.endMs !== null,
  );

/** A query member as the SDK sends it (`filter[call_control_id]=...`), or as a parser that nests brackets gives it. */
function queryMember(req: Request, group: string, name: string): string | undefined {
  const flat = req.query[`${group}[${name}]`];
  const nested = (req.query[group] as Record<string, unknown> | undefined)?.[name];
  const value = flat ?? nested;
  return typeof value === 'string' ? value : undefined;
}

export function createTelnyxTwinRecordings(options: {
  sql: TwinSql;
  timeScale: number;
  /** The twin's address (known once it listens), for the download URLs. */
  baseUrl: () => string;
  espeakPath?: string;
}) {
  const { sql } = options;
  const secret = randomBytes(32);
  const signatureOf = (file: string, expires: string) =>
    createHmac('sha256', secret).update(`${file}:${expires}`).digest('base64url');
  const wallAt = (call: TelnyxTwinCall, atMs: number) => new Date(call.createdAt.getTime() + atMs * options.timeScale);

  /** The recording's download URLs: its format's, presigned until DOWNLOAD_URL_LIFETIME_MS from now. */
  function downloadUrls(recording: TwinCallRecording): Record<string, string> {
    const expires = String(Date.now() + DOWNLOAD_URL_LIFETIME_MS);
    const file = `${recording.id}.${recording.format}`;
    return {
      [recording.format]: `${options.baseUrl()}/recording-files/${file}?expires=${expires}&signature=${signatureOf(file, expires)}`,
    };
  }

  const isDeleted = async (id: string) =>
    (
      await sql<{ id: string }>(
        { name: 'telnyx_twin_recording_deleted', text: `SELECT id FROM ${DELETED} WHERE id = $1` },
        id,
      )
    ).length > 0;

  /** The call of a recording the account has (saved, not deleted). */
  async function findRecording(account: string | null, id: string) {
    const [call] = await sql<TelnyxTwinCall>(
      {
        name: 'telnyx_twin_recording_call',
        text: `SELECT * FROM ${TELNYX_TWIN_TABLES.calls}
                WHERE ($1::text IS NULL OR account = $1) AND state->'recordings' @> jsonb_build_array(jsonb_build_object('id', $2::text))`,
      },
      account,
      id,
    );
    const recording = call && savedOf(call).find((saved) => saved.id === id);
    return call && recording && !(await isDeleted(id)) ? { call, recording } : null;
  }

  /** The recording resource (components.schemas.RecordingResponseData). */
  function resource(call: TelnyxTwinCall, recording: Saved) {
    const started = wallAt(call, recording.startMs).toISOString();
    const ended = wallAt(call, recording.endMs).toISOString();
    return {
      id: recording.id,
      record_type: 'recording',
      call_control_id: call.callControlId,
      call_leg_id: call.callLegId,
      call_session_id: call.callSessionId,
      connection_id: call.connectionId,
      channels: recording.channels,
      created_at: ended,
      updated_at: ended,
      recording_started_at: started,
      recording_ended_at: ended,
      duration_millis: Math.round(recording.endMs - recording.startMs),
      download_urls: downloadUrls(recording),
      from: call.from,
      to: call.to,
      initiated_by: 'StartCallRecordingAPI',
      source: 'call',
      status: 'completed',
    };
  }

  return {
    downloadUrls,

    async ensureTable() {
      await sql(SCHEMA_SQL);
    },

    /** The REST routes (under /v2, the key's account in res.locals.account) and the download URLs (presigned). */
    addRoutes(
      app: Express,
      route: (
        handler: (req: Request, res: Response) => Promise<void>,
      ) => (req: Request, res: Response, next: NextFunction) => void,
    ) {
      const accountOf = (res: Response) => (res.locals.account as { id: string }).id;

      app.get(
        '/v2/recordings',
        route(async (req, res) => {
          const filters = FILTERS.flatMap((name) => {
            const value = queryMember(req, 'filter', name);
            return value === undefined ? [] : [{ column: FILTER_COLUMNS[name], value }];
          });
          const pageNumber = Number(queryMember(req, 'page', 'number') ?? 1);
          const pageSize = Number(queryMember(req, 'page', 'size') ?? 20);
          if (!Number.isInteger(pageNumber) || pageNumber < 1) throw TELNYX_ERRORS.range('page[number]', 1, 2 ** 31);
          if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 250)
            throw TELNYX_ERRORS.range('page[size]', 1, 250);
          const calls = await sql<TelnyxTwinCall>(
            `SELECT * FROM ${TELNYX_TWIN_TABLES.calls}
              WHERE account = $1 AND jsonb_array_length(coalesce(state->'recordings', '[]')) > 0
                ${filters.map((filter, index) => `AND ${filter.column} = $${index + 2}`).join(' ')}
              ORDER BY "createdAt" DESC LIMIT ${LISTING_CAP}`,
            accountOf(res),
            ...filters.map((filter) => filter.value),
          );
          const deleted = new Set(
            (await sql<{ id: string }>(`SELECT id FROM ${DELETED} WHERE account = $1`, accountOf(res))).map(
              (row) => row.id,
            ),
          );
          const all = calls.flatMap((call) =>
            savedOf(call)
              .filter((recording) => !deleted.has(recording.id))
              .map((recording) => resource(call, recording)),
          );
          res.json({
            data: all.slice((pageNumber - 1) * pageSize, pageNumber * pageSize),
            meta: {
              page_number: pageNumber,
              page_size: pageSize,
              total_pages: Math.max(1, Math.ceil(all.length / pageSize)),
              total_results: all.length,
            },
          });
        }),
      );

      app.get(
        '/v2/recordings/:id',
        route(async (req, res) => {
          const found = await findRecording(accountOf(res), String(req.params.id));
          if (!found) throw TELNYX_ERRORS.notFound(`Recording ${String(req.params.id)}`);
          res.json({ data: resource(found.call, found.recording) });
        }),
      );

      app.delete(
        '/v2/recordings/:id',
        route(async (req, res) => {
          const id = String(req.params.id);
          const found = await findRecording(accountOf(res), id);
          if (!found) throw TELNYX_ERRORS.notFound(`Recording ${id}`);
          await sql(
            {
              name: 'telnyx_twin_recording_delete',
              text: `INSERT INTO ${DELETED} (id, account) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
            },
            id,
            accountOf(res),
          );
          res.json({ data: resource(found.call, found.recording) });
        }),
      );

      // The download URL: presigned (no Authorization), until it expires; the file is gone with its recording.
      app.get(
        '/recording-files/:file',
        route(async (req, res) => {
          const file = String(req.params.file);
          const match = /^([0-9a-f-]{36})\.(wav|mp3)$/.exec(file);
          const expires = typeof req.query.expires === 'string' ? req.query.expires : '';
          const given = typeof req.query.signature === 'string' ? req.query.signature : '';
          const expected = signatureOf(file, expires);
          const signed = given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
          if (!match || !signed || !(Number(expires) > Date.now())) {
            res.status(403).type('application/xml').send('<Error><Code>AccessDenied</Code></Error>');
            return;
          }
          const found = await findRecording(null, match[1]!);
          if (!found || found.recording.format !== match[2]) {
            res.status(404).type('application/xml').send('<Error><Code>NoSuchKey</Code></Error>');
            return;
          }
          const { call, recording } = found;
          const lines = recordedLinesOf((call.log ?? []) as LoggedLine[], recording.startMs, recording.endMs);
          const wav = await spokenWav(lines, {
            durationMs: recording.endMs - recording.startMs,
            channels: recording.channels === 'dual' ? 2 : 1,
            espeakPath: options.espeakPath,
          });
          if (recording.format === 'mp3') res.type('audio/mpeg').send(await mp3Of(wav));
          else res.type('audio/x-wav').send(wav);
        }),
      );
    },
  };
}
