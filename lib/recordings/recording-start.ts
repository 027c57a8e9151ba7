import { log } from '../log';
import type { RunSql } from '../run-sql';
import { claimRecordingStart, markRecordingFailed, markRecordingStarted } from './recording-store';

/**
 * Starts the recording of an answered call once, when its workspace records calls (docs/features/recordings.md): the
 * claim in the database makes a repeated request (a TwiML request Twilio sends again, a webhook Telnyx delivers twice)
 * start nothing. `start` asks the carrier and answers the recording's id, null when the carrier gives none at the
 * start (Telnyx: found when it is saved), or false when the call has already ended. A start the carrier refuses is
 * logged (the carrier's status, code and message, never the request) and marked failed; the call goes on unrecorded
 * rather than not at all.
 */
export async function startRecordingOnce(
  sql: RunSql,
  callId: string,
  carrier: string,
  start: () => Promise<string | null | false>,
): Promise<void> {
  if (!(await claimRecordingStart(sql, callId))) return;
  try {
    const started = await start();
    if (started === false) await markRecordingFailed(sql, callId);
    else await markRecordingStarted(sql, callId, started);
  } catch (error) {
    await markRecordingFailed(sql, callId);
    log.warn({ err: error, callId }, `the call could not be recorded: ${carrier} refused the recording`);
  }
}
