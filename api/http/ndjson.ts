import type { Response } from 'express';
import { log } from '../../lib/log';

export const NDJSON_MEDIA_TYPE = 'application/x-ndjson';

/**
 * Writes events as newline-delimited JSON, one object a line, each sent as soon as it is produced (no
 * buffering: the headers go at once, every line is flushed by its own write). The answer's status and headers
 * are committed before the first event: a failure after that cannot become an error status, so it is told
 * as a last line `{"type":"error","message":...}` (the convention of every NDJSON answer of this API).
 * A client that goes away stops the writing; the producer sees it through its own abort signal.
 */
export async function writeNdjson(
  res: Response,
  status: number,
  events: AsyncIterable<unknown>,
  headers: Record<string, string> = {},
): Promise<void> {
  res.status(status).set({ 'Content-Type': NDJSON_MEDIA_TYPE, 'Cache-Control': 'no-store', ...headers });
  res.flushHeaders();
  try {
    for await (const event of events) {
      if (res.destroyed) return;
      if (!res.write(`${JSON.stringify(event)}\n`))
        await new Promise<void>((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
    }
  } catch (error) {
    log.error({ err: error }, 'the answer failed after its headers were sent');
    if (!res.destroyed) res.write(`${JSON.stringify({ type: 'error', message: 'the answer failed unexpectedly' })}\n`);
  }
  res.end();
}

/** An abort signal that fires when the client closes the connection before its answer is complete. */
export function clientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
