import type { JsonHttp } from './json-http';

/** Backoff of a delivery the receiver did not answer 2xx: the first delay, doubling up to the most. */
export interface RetryBackoff {
  firstMs: number;
  maxMs: number;
}

/** Resolves after `ms`, or at once when the signal aborts (never rejects). */
export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    // The listener goes with the wait: one process-wide signal waited on again and again must not gather them.
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(ms, 0));
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * POSTs one webhook body until the receiver answers 2xx, as providers deliver theirs (Twilio, Meta,
 * Stripe): an unreachable receiver, a timeout or any other status is retried after the backoff, doubling
 * up to its most. `headers` is asked again for every attempt (a signature may carry the time it was made).
 * Answers true once delivered, false when `signal` aborted first.
 */
export async function postUntilAnswered(
  http: JsonHttp,
  url: string,
  delivery: { rawBody: string; headers: () => Record<string, string>; retry: RetryBackoff; signal: AbortSignal },
): Promise<boolean> {
  const { retry, signal } = delivery;
  for (let delay = retry.firstMs; !signal.aborted; delay = Math.min(delay * 2, retry.maxMs)) {
    try {
      const response = await http.request('POST', url, {
        rawBody: delivery.rawBody,
        headers: delivery.headers(),
        signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]),
      });
      if (response.status >= 200 && response.status <= 299) return true;
    } catch {
      // Unreachable or timed out: retried like any answer that is not 2xx.
    }
    await sleep(delay, signal);
  }
  return false;
}
