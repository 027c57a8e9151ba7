import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';

/** A recording's audio as the carrier streams it (lib/recordings/carrier-recordings.ts: what the carriers answer). */
export interface RecordingMedia {
  contentType: string;
  /** Bytes, when the carrier says; null: streamed without a length. */
  length: number | null;
  body: Readable;
}

/** How long a recording's media answer may take to begin (its headers); the audio then streams as long as it lasts. */
const MEDIA_HEADERS_TIMEOUT_MS = 30_000;

/**
 * A recording's audio at a carrier's media URL (docs/features/recordings.md#listening), shared by the carriers' recordings, streamed as the carrier sends
 * it; null when the carrier no longer has it (404). `headers` carry the carrier's credentials when its media URL asks
 * for them (Twilio's): never logged, and fetch drops them on a redirect to another origin. A failure is rethrown as
 * the carrier's error (`failed`), with no request in it.
 */
export async function fetchRecordingMedia(
  url: string,
  headers: Record<string, string>,
  failed: (message: string, status: number | undefined) => Error,
): Promise<RecordingMedia | null> {
  let response: Response;
  // Only the wait for the answer's headers is bounded: the audio then streams for as long as it lasts.
  const waiting = new AbortController();
  const timer = setTimeout(() => waiting.abort(), MEDIA_HEADERS_TIMEOUT_MS);
  try {
    response = await fetch(url, { headers, redirect: 'follow', signal: waiting.signal });
  } catch (error) {
    // fetch's error names the URL at most, never the headers: rethrown without its cause all the same.
    throw failed(`recording media: ${(error as Error).message}`, undefined);
  } finally {
    clearTimeout(timer);
  }
  if (response.status === 404) return null;
  if (!response.ok || !response.body) throw failed(`recording media answered ${response.status}`, response.status);
  const length = Number(response.headers.get('content-length'));
  return {
    contentType: response.headers.get('content-type') ?? 'audio/x-wav',
    length: Number.isFinite(length) && length > 0 ? length : null,
    body: Readable.fromWeb(response.body as ReadableStream),
  };
}
