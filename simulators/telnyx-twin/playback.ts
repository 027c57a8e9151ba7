import { createHash } from 'node:crypto';
import { TELNYX_ERRORS } from './errors';

/**
 * Call Control's `playback_start` (Play audio URL, StartCallPlayback) as the Telnyx twin takes it
 * (docs/features/carriers/twins.md#the-telnyx-twin): the request's members checked as the description
 * (components.schemas.PlayAudioUrlRequest) types them, and the audio fetched from `audio_url` as Telnyx fetches it, so
 * that what the call would play is known. The twin imports nothing of the product: this is the provider's behaviour.
 */

/** What a queued playback_start carries (QueuedCommand.params.playback). */
export interface PlaybackRequest {
  audioUrl: string;
  audioType: 'mp3' | 'wav';
  /** 1 to 100, or 'infinity'. */
  loop: number | 'infinity';
  overlay: boolean;
  targetLegs: 'self' | 'opposite' | 'both';
  cacheAudio: boolean;
  /** What the fetch of audio_url gave (fetched once the command is accepted). */
  fetched?: PlaybackFetch;
}

export interface PlaybackFetch {
  /** The HTTP status; null when no answer came. */
  status: number | null;
  contentType: string | null;
  bytes: number;
  sha256: string | null;
  /** Whether the bytes are of the audio_type's format (its first bytes): Telnyx plays MP3 and WAV only. */
  playable: boolean;
  /** Why it cannot be played, as call.playback.ended's status_detail says. */
  detail: string | null;
}

type Body = Record<string, unknown>;

const TARGET_LEGS = ['self', 'opposite', 'both'] as const;
const AUDIO_TYPES = ['mp3', 'wav'] as const;
/** The largest file the twin fetches (a background loop is small; the product's uploads are at most 720 KB). */
const MAX_AUDIO_BYTES = 16 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;

const isHttpUrl = (value: string) => {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
};

function optionalBoolean(body: Body, name: string, fallback: boolean): boolean {
  const value = body[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean')
    throw TELNYX_ERRORS.invalid(name, `The '${name}' parameter must be of type 'boolean'`);
  return value;
}

function optionalEnum<T extends string>(body: Body, name: string, values: readonly T[], fallback: T): T {
  const value = body[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string' || !values.includes(value as T)) throw TELNYX_ERRORS.enumerated(name, values);
  return value as T;
}

/** `loop` (Loopcount): an integer from 1 to 100, or the string `infinity`; default 1. */
function loopOf(body: Body): number | 'infinity' {
  const value = body.loop;
  if (value === undefined || value === null) return 1;
  if (value === 'infinity') return 'infinity';
  const count = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof count !== 'number' || !Number.isInteger(count))
    throw TELNYX_ERRORS.invalid('loop', "The 'loop' parameter must be an integer or 'infinity'");
  if (count < 1 || count > 100) throw TELNYX_ERRORS.range('loop', 1, 100);
  return count;
}

/**
 * The members of a playback_start, checked: `audio_url` (an http(s) URL of a WAV or MP3 file), `loop`, `overlay`,
 * `target_legs` (limited to `self` when `overlay` is on), `audio_type` (mp3 by default), `cache_audio`. `media_name`
 * (Telnyx's media storage) and `playback_content` (inline base64) are Telnyx's other sources, which the twin does not
 * hold: refused as missing `audio_url`, as is a request with none.
 */
export function readPlaybackStart(body: Body): PlaybackRequest {
  if (body.media_name !== undefined && body.audio_url !== undefined)
    throw TELNYX_ERRORS.invalid('media_name', 'media_name and audio_url cannot be used together in one request.');
  const audioUrl = body.audio_url;
  if (audioUrl === undefined || audioUrl === null || audioUrl === '') throw TELNYX_ERRORS.missing('audio_url');
  if (typeof audioUrl !== 'string' || !isHttpUrl(audioUrl))
    throw TELNYX_ERRORS.invalid('audio_url', 'audio_url must be a valid URL');
  const overlay = optionalBoolean(body, 'overlay', false);
  const targetLegs = optionalEnum(body, 'target_legs', TARGET_LEGS, 'self');
  if (overlay && targetLegs !== 'self')
    throw TELNYX_ERRORS.invalid('target_legs', 'When overlay is enabled, target_legs is limited to self.');
  return {
    audioUrl,
    audioType: optionalEnum(body, 'audio_type', AUDIO_TYPES, 'mp3'),
    loop: loopOf(body),
    overlay,
    targetLegs,
    cacheAudio: optionalBoolean(body, 'cache_audio', true),
  };
}

/** Whether the bytes open as the audio type says: RIFF/WAVE for wav; an ID3 tag or an MPEG frame sync for mp3. */
function isOfType(bytes: Buffer, type: 'mp3' | 'wav'): boolean {
  if (type === 'wav')
    return bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WAVE';
  return bytes.subarray(0, 3).toString('latin1') === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0);
}

/**
 * Fetches audio_url as Telnyx does before it plays (a GET, no credentials: the URL is all it has), and says what came:
 * a failure's detail in the words of the description's example ("Received curl error 22 HTTP error code 404 trying to
 * fetch ...").
 */
export async function fetchPlaybackAudio(request: PlaybackRequest): Promise<PlaybackFetch> {
  const failed = (status: number | null, detail: string): PlaybackFetch => ({
    status,
    contentType: null,
    bytes: 0,
    sha256: null,
    playable: false,
    detail,
  });
  let response: Response;
  try {
    response = await fetch(request.audioUrl, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'follow' });
  } catch {
    return failed(null, `Received curl error 7 trying to fetch ${request.audioUrl}.`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    return failed(
      response.status,
      `Received curl error 22 HTTP error code ${response.status} trying to fetch ${request.audioUrl}.`,
    );
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  if (bytes.length > MAX_AUDIO_BYTES) return failed(response.status, 'The audio file is too large.');
  const playable = isOfType(bytes, request.audioType);
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    playable,
    detail: playable ? null : `The file at ${request.audioUrl} is not a ${request.audioType.toUpperCase()} file.`,
  };
}

/**
 * StartCallPlayback's note, as written: "A customer cannot Play Audio with `overlay=true` unless there is a Play Audio
 * with `overlay=false` actively playing" (and the member's: "`overlay: true` will only work if there is another audio
 * file already being played on the call"). Speech (speak, a gather's prompt, a ConversationRelay session) is not an
 * audio file: an overlay over it alone is refused (docs/features/carriers/twins.md#the-telnyx-twin).
 */
export function assertFilePlays(filePlays: boolean, request: PlaybackRequest): void {
  if (request.overlay && !filePlays) throw TELNYX_ERRORS.nothingToOverlay();
}
