import { DEADLINE_MARGIN_MS, MAX_CALL_LENGTH_MS } from '../../lib/calls/call-deadline';
import { openedConnectionsOf, verifiedConnection } from '../../lib/carrier-connections/opened-connections';
import { telnyxAudioTypeOf } from '../../lib/background-audio/carrier-playback';
import { createTelnyxCalls } from '../../lib/carriers/telnyx/telnyx-calls';
import type { TelnyxConnection } from '../../lib/carriers/telnyx/telnyx-client';
import {
  isTelnyxBackgroundAudioToken,
  telnyxBackgroundAudioUrl,
  type BackgroundAudioGrant,
} from '../../lib/carriers/telnyx/telnyx-urls';
import { ErrorCode } from '../../lib/error-codes';
import { log } from '../../lib/log';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';
import { callBackgroundAudioContent, callBackgroundAudioMediaType } from '../background-audio/background-audio';
import { scriptCallRow, type ScriptCallRow } from './carrier-call-store';

/**
 * How long a background audio URL opens after the conversation starts: the longest call and the margin of its
 * deadline (lib/calls/call-deadline.ts), so that Telnyx can fetch it again for any loop of any call, and no longer.
 */
export const BACKGROUND_AUDIO_URL_TTL_MS = MAX_CALL_LENGTH_MS + DEADLINE_MARGIN_MS;

/**
 * The conversation of a call has started (docs/features/background-audio.md#on-a-call): when the call's agent has
 * background audio, Telnyx is told to play it under the call, looped to the hang-up (playback_start, overlay), from
 * the call's signed, expiring URL. Once per call (its command_id). Never fails the conversation: a refusal by Telnyx
 * (the call has no audio to overlay, say) is logged and the call goes on without it.
 */
export async function startTelnyxBackgroundAudio(
  services: AppServices,
  connection: TelnyxConnection,
  call: ScriptCallRow,
  attemptId: string,
  callControlId: string,
): Promise<void> {
  const audioId = call.agent?.backgroundAudioId ?? null;
  if (!audioId) return;
  try {
    const mediaType = await callBackgroundAudioMediaType(services, call.workspaceId, audioId);
    if (!mediaType) return;
    const publicBaseUrl = services.publicBaseUrl!;
    const grant: BackgroundAudioGrant = {
      connectionId: connection.id,
      attemptId,
      audioId,
      expiresAt: Math.ceil((Date.now() + BACKGROUND_AUDIO_URL_TTL_MS) / 1000),
    };
    await createTelnyxCalls(connection, { publicBaseUrl }).startBackgroundAudio(callControlId, {
      url: telnyxBackgroundAudioUrl(publicBaseUrl, grant, connection.secrets.apiKey),
      type: telnyxAudioTypeOf(mediaType),
    });
  } catch (error) {
    log.warn(
      { attemptId, error: error instanceof Error ? error.message : String(error) },
      'background audio not started',
    );
  }
}

/** What GET of the background audio route asks (its query, as the URL was signed). */
export interface BackgroundAudioRequest {
  connectionId: string;
  attemptId: string;
  audio: string;
  expires: string;
  token: string;
}

/**
 * The audio a signed URL names, for Telnyx to play: 401 invalid_signature unless the token is the connection's for
 * that call, asset and expiry and the expiry has not passed (a tampered, forged or expired URL; an unknown or removed
 * connection), 404 unknown_call when the call is not one placed through that connection, 404 not_found when the
 * upload has been deleted since. Never another workspace's audio: the asset is read in the call's workspace.
 */
export async function telnyxBackgroundAudio(services: AppServices, request: BackgroundAudioRequest) {
  const expiresAt = /^\d{1,12}$/.test(request.expires) ? Number(request.expires) : NaN;
  const grant = { connectionId: request.connectionId, attemptId: request.attemptId, audioId: request.audio, expiresAt };
  // Checked with the connection's key as this process keeps it, and read again if that refuses (a rotated key).
  const connection =
    services.carrierKeyring && services.publicBaseUrl && Number.isFinite(expiresAt)
      ? ((await verifiedConnection(
          openedConnectionsOf(services.db, services.carrierKeyring),
          request.connectionId,
          (opened) =>
            (opened.provider === 'telnyx' || opened.provider === 'telnyx-twin') &&
            isTelnyxBackgroundAudioToken((opened as TelnyxConnection).secrets.apiKey, grant, request.token),
        )) as TelnyxConnection | null)
      : null;
  if (!connection) throw new Refusal(ErrorCode.invalid_signature);
  if (expiresAt * 1000 <= Date.now()) throw new Refusal(ErrorCode.invalid_signature, { detail: 'the URL has expired' });
  const call = await scriptCallRow(poolSql(services.sql), request.attemptId, connection.id);
  if (!call) throw new Refusal(ErrorCode.unknown_call);
  const content = await callBackgroundAudioContent(services, call.workspaceId, request.audio);
  if (!content) throw new Refusal(ErrorCode.not_found, { detail: 'the background audio has been deleted' });
  return content;
}
