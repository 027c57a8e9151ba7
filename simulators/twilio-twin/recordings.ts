import { randomBytes } from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import { mp3Of, recordedLinesOf, spokenWav, type LoggedLine } from '../twin-common/spoken-audio';
import { type TwinSql, twinSchemaBatch } from '../twin-common/sql';
import { TWILIO_TWIN_SCHEMA, type TwilioTwinCall, type TwilioTwinCallStore } from './call-store';
import { TWILIO_ERRORS, TwilioRestError } from './errors';
import { rfc2822 } from './resource';
import type { HttpMethod } from './twiml';

/**
 * Call recordings on the twin (docs/features/carriers/twins.md#recordings), as Twilio documents them: started on a call
 * in progress (POST .../Calls/{CallSid}/Recordings.json, RecordingStatusCallback and its events, RecordingChannels
 * mono or dual), finished with the call: its status callback (completed, or absent when under a second was recorded),
 * signed like the call's, is owed in the step that ends the call; read (.json), heard (.wav, .mp3: the call's lines
 * spoken by espeak-ng, twin-common/spoken-audio.ts) and deleted (DELETE .../Recordings/{Sid}.json).
 * A recording's status and length are the call's: in progress while the call is, completed from its end.
 */

const RECORDINGS = `${TWILIO_TWIN_SCHEMA}.recordings`;
const SCHEMA_SQL = twinSchemaBatch(
  TWILIO_TWIN_SCHEMA,
  `
CREATE TABLE IF NOT EXISTS ${RECORDINGS} (
  sid text PRIMARY KEY,
  "accountSid" text NOT NULL,
  "callSid" text NOT NULL,
  "startMs" double precision NOT NULL,
  channels integer NOT NULL,
  track text NOT NULL,
  "statusCallback" text,
  "statusCallbackMethod" text NOT NULL,
  "statusCallbackEvents" jsonb NOT NULL,
  "createdAt" timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS recordings_call_idx ON ${RECORDINGS} ("callSid");
`,
  RECORDINGS,
);

interface TwinRecording {
  sid: string;
  accountSid: string;
  callSid: string;
  /** Simulated ms from the call's dial: the call's clock when the recording was asked for. */
  startMs: number;
  channels: 1 | 2;
  track: string;
  statusCallback: string | null;
  statusCallbackMethod: HttpMethod;
  statusCallbackEvents: string[];
  createdAt: Date;
}

const COLUMNS = `sid, "accountSid", "callSid", "startMs", channels, track, "statusCallback", "statusCallbackMethod",
  "statusCallbackEvents", "createdAt"`;
const ENDED = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);
/** Under a second recorded: Twilio's absent. */
const SHORTEST_MS = 1_000;

type Form = Record<string, string | string[] | undefined>;
const one = (form: Form, name: string) => {
  const value = form[name];
  return Array.isArray(value) ? value.at(-1) : value;
};
const many = (form: Form, name: string) =>
  [form[name] ?? []]
    .flat()
    .flatMap((item) => item.split(/[\s,]+/))
    .filter(Boolean);

/** The call's simulated clock (calls.ts CallState.clockMs): where the call is in its life. */
const clockOf = (call: TwilioTwinCall) => (call.state as { clockMs?: number } | null)?.clockMs ?? 0;

export function createTwinRecordings(options: {
  sql: TwinSql;
  calls: TwilioTwinCallStore;
  /** The twin's address, for the RecordingUrl and media_url it sends (known once it listens). */
  baseUrl: () => string;
  espeakPath?: string;
}) {
  const { sql, calls } = options;

  const read = async (sid: string) =>
    (
      await sql<TwinRecording>(
        { name: 'twilio_twin_recording', text: `SELECT ${COLUMNS} FROM ${RECORDINGS} WHERE sid = $1` },
        sid,
      )
    )[0] ?? null;

  /** The recording's state from its call's: in progress while the call is on; after, completed or absent. */
  function progress(recording: TwinRecording, call: TwilioTwinCall | null) {
    const ended = call !== null && ENDED.has(call.status);
    const durationMs = ended ? Math.max(0, clockOf(call) - recording.startMs) : null;
    const status = durationMs === null ? 'in-progress' : durationMs < SHORTEST_MS ? 'absent' : 'completed';
    return { status, durationMs, durationSec: durationMs === null ? null : Math.round(durationMs / 1_000) };
  }

  const uri = (recording: TwinRecording) =>
    `/2010-04-01/Accounts/${recording.accountSid}/Recordings/${recording.sid}.json`;

  /** The Recording resource (api.v2010.account.recording). */
  function resource(recording: TwinRecording, call: TwilioTwinCall | null) {
    const { status, durationSec } = progress(recording, call);
    const base = `/2010-04-01/Accounts/${recording.accountSid}/Recordings/${recording.sid}`;
    return {
      account_sid: recording.accountSid,
      api_version: '2010-04-01',
      call_sid: recording.callSid,
      conference_sid: null,
      channels: recording.channels,
      date_created: rfc2822(recording.createdAt),
      date_updated: rfc2822(recording.createdAt),
      start_time: rfc2822(recording.createdAt),
      price: null,
      price_unit: 'USD',
      duration: durationSec === null ? null : String(durationSec),
      sid: recording.sid,
      source: 'StartCallRecordingAPI',
      status,
      error_code: null,
      uri: uri(recording),
      encryption_details: null,
      subresource_uris: {
        add_on_results: `${base}/AddOnResults.json`,
        transcriptions: `${base}/Transcriptions.json`,
      },
      media_url: `${options.baseUrl()}${base}`,
    };
  }

  /** The audio: each line of the call's log said while it was recorded, at its moment. */
  async function audio(recording: TwinRecording, call: TwilioTwinCall, durationMs: number) {
    const lines = recordedLinesOf((call.log ?? []) as LoggedLine[], recording.startMs);
    return spokenWav(lines, { durationMs, channels: recording.channels, espeakPath: options.espeakPath });
  }

  return {
    async ensureTable() {
      await sql(SCHEMA_SQL);
    },

    /**
     * The recording status callbacks a call's end owes (calls.ts commits them with the step that ends the call, as
     * its other callbacks), for `endMs`, the call's clock at its end.
     */
    async callbacksAtEnd(call: TwilioTwinCall, endMs: number) {
      const recordings = await sql<TwinRecording>(
        {
          name: 'twilio_twin_recordings_of_call',
          text: `SELECT ${COLUMNS} FROM ${RECORDINGS} WHERE "callSid" = $1 ORDER BY "createdAt", sid`,
        },
        call.sid,
      );
      return recordings.flatMap((recording) => {
        const durationMs = Math.max(0, endMs - recording.startMs);
        const status = durationMs < SHORTEST_MS ? 'absent' : 'completed';
        if (!recording.statusCallback || !recording.statusCallbackEvents.includes(status)) return [];
        return [
          {
            url: recording.statusCallback,
            method: recording.statusCallbackMethod,
            params: {
              AccountSid: recording.accountSid,
              CallSid: recording.callSid,
              RecordingSid: recording.sid,
              RecordingUrl: `${options.baseUrl()}/2010-04-01/Accounts/${recording.accountSid}/Recordings/${recording.sid}`,
              RecordingStatus: status,
              RecordingDuration: String(Math.round(durationMs / 1_000)),
              RecordingChannels: String(recording.channels),
              RecordingStartTime: rfc2822(recording.createdAt),
              RecordingSource: 'StartCallRecordingAPI',
              RecordingTrack: recording.track,
              ErrorCode: '0',
            },
          },
        ];
      });
    },

    /** The REST routes, under the account's path (authenticated there). */
    addRoutes(
      app: Express,
      accountPath: string,
      route: (
        handler: (req: Request, res: Response) => Promise<void>,
      ) => (req: Request, res: Response, next: NextFunction) => void,
    ) {
      app.post(
        `${accountPath}/Calls/:CallSid/Recordings.json`,
        route(async (req, res) => {
          const accountSid = String(req.params.AccountSid);
          const call = await calls.read(String(req.params.CallSid));
          if (!call || call.accountSid !== accountSid) throw TWILIO_ERRORS.notFound(req.path);
          if (call.status !== 'in-progress')
            throw new TwilioRestError(400, 21220, 'Call is not in-progress. Cannot create recording.');
          const form = (req.body ?? {}) as Form;
          const channels = one(form, 'RecordingChannels') ?? 'mono';
          if (channels !== 'mono' && channels !== 'dual')
            throw TWILIO_ERRORS.badRequest('RecordingChannels must be mono or dual');
          const track = one(form, 'RecordingTrack') ?? 'both';
          if (!['inbound', 'outbound', 'both'].includes(track))
            throw TWILIO_ERRORS.badRequest('RecordingTrack must be inbound, outbound or both');
          const statusCallback = one(form, 'RecordingStatusCallback') || null;
          if (statusCallback && !/^https?:\/\//.test(statusCallback))
            throw TWILIO_ERRORS.badRequest(`RecordingStatusCallback is not a valid URL: ${statusCallback}`);
          const method = (one(form, 'RecordingStatusCallbackMethod') ?? 'POST').toUpperCase();
          if (method !== 'GET' && method !== 'POST')
            throw TWILIO_ERRORS.badRequest('RecordingStatusCallbackMethod must be GET or POST');
          const events = many(form, 'RecordingStatusCallbackEvent');
          const unknown = events.find((event) => !['in-progress', 'completed', 'absent'].includes(event));
          if (unknown) throw TWILIO_ERRORS.badRequest(`Invalid RecordingStatusCallbackEvent: ${unknown}`);
          const [created] = await sql<TwinRecording>(
            {
              name: 'twilio_twin_recording_create',
              text: `INSERT INTO ${RECORDINGS} (sid, "accountSid", "callSid", "startMs", channels, track, "statusCallback",
                       "statusCallbackMethod", "statusCallbackEvents")
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb) RETURNING ${COLUMNS}`,
            },
            `RE${randomBytes(16).toString('hex')}`,
            accountSid,
            call.sid,
            // The call's clock now: a TwiML request in flight holds it, so what that TwiML says is recorded.
            clockOf(call),
            channels === 'dual' ? 2 : 1,
            track,
            statusCallback,
            method,
            // None named: Twilio calls back on completed only.
            JSON.stringify(events.length > 0 ? events : ['completed']),
          );
          const { subresource_uris: _subresources, media_url: _media, ...callRecording } = resource(created!, call);
          res.status(201).json({
            ...callRecording,
            track,
            price_unit: null,
            uri: `/2010-04-01/Accounts/${accountSid}/Calls/${call.sid}/Recordings/${created!.sid}.json`,
          });
        }),
      );

      app.get(
        `${accountPath}/Recordings/:RecordingFile`,
        route(async (req, res) => {
          const match = /^(RE[0-9a-f]{32})(\.json|\.wav|\.mp3)?$/.exec(String(req.params.RecordingFile));
          const recording = match ? await read(match[1]!) : null;
          if (!recording || recording.accountSid !== req.params.AccountSid) throw TWILIO_ERRORS.notFound(req.path);
          const call = await calls.read(recording.callSid);
          if (match![2] === '.json') {
            res.json(resource(recording, call));
            return;
          }
          // The media exists once the recording is complete.
          const { status, durationMs } = progress(recording, call);
          if (status !== 'completed' || durationMs === null) throw TWILIO_ERRORS.notFound(req.path);
          const wav = await audio(recording, call!, durationMs);
          if (match![2] === '.mp3') res.type('audio/mpeg').send(await mp3Of(wav));
          else res.type('audio/x-wav').send(wav);
        }),
      );

      app.delete(
        `${accountPath}/Recordings/:RecordingFile`,
        route(async (req, res) => {
          const match = /^(RE[0-9a-f]{32})\.json$/.exec(String(req.params.RecordingFile));
          const deleted = match
            ? await sql(
                {
                  name: 'twilio_twin_recording_delete',
                  text: `DELETE FROM ${RECORDINGS} WHERE sid = $1 AND "accountSid" = $2 RETURNING sid`,
                },
                match[1],
                String(req.params.AccountSid),
              )
            : [];
          if (deleted.length === 0) throw TWILIO_ERRORS.notFound(req.path);
          res.status(204).end();
        }),
      );
    },
  };
}

export type TwinRecordings = ReturnType<typeof createTwinRecordings>;
