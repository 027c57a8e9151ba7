/*
 * A cap on how much of a provider's answer is read (docs/configuration.md#body-size-caps). Every SDK reads an answer's
 * body whole; a broken or hostile endpoint (a *-twin connection's tenant-set base URL, a compromised proxy, a bug)
 * could make a worker or the API buffer gigabytes. Past the cap the answer is cut and the request fails with
 * `EBODYCAP`, the same error whichever client read it.
 */

/** The cap of call-control and messaging answers (Twilio, Telnyx, Meta's Graph API): theirs are a few KB at most. */
export const PROVIDER_BODY_CAP_BYTES = 1024 * 1024;

/** The error of an answer past its cap: code `EBODYCAP`, naming the host and the cap, never the body. */
export function bodyCapError(host: string, capBytes: number): Error & { code: 'EBODYCAP' } {
  return Object.assign(new Error(`the answer from ${host} exceeds ${capBytes} bytes`), { code: 'EBODYCAP' as const });
}

/** Whether an error (or its cause, as an SDK wraps it) is a body cap's. */
export function isBodyCapError(error: unknown): boolean {
  for (let seen = error, depth = 0; seen && depth < 5; seen = (seen as { cause?: unknown }).cause, depth++)
    if ((seen as { code?: unknown }).code === 'EBODYCAP') return true;
  return false;
}

/** A Content-Length header over the cap: refused before a byte of the body is read. */
export function declaredOverCap(contentLength: string | number | null | undefined, capBytes: number): boolean {
  if (contentLength === null || contentLength === undefined) return false;
  const declared = Number(contentLength);
  return Number.isFinite(declared) && declared > capBytes;
}

/**
 * `fetch` (the platform's, or `base`) whose answers are cut past `capBytes`: one whose Content-Length says more fails
 * at once; any other's body is passed through chunk by chunk (a streamed answer still streams) and errors with the cap
 * error once more than `capBytes` came, which cancels the rest of the download. The SDKs take it as their `fetch`
 * option (openai, telnyx, gaxios's fetchImplementation, Shopify's customFetchApi).
 */
export function cappedFetch(capBytes: number, base: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body) return response;
    const url = response.url || (typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const host = hostOf(url);
    if (declaredOverCap(response.headers.get('content-length'), capBytes)) {
      await response.body.cancel().catch(() => undefined);
      throw bodyCapError(host, capBytes);
    }
    let bytes = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          bytes += chunk.byteLength;
          // Erroring the transform cancels the source: the connection is closed, nothing more is read.
          if (bytes > capBytes) controller.error(bodyCapError(host, capBytes));
          else controller.enqueue(chunk);
        },
      }),
    );
    const capped = new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // A constructed Response has no URL and was not redirected; the SDKs may read both (errors, relative links).
    Object.defineProperties(capped, {
      url: { value: response.url },
      redirected: { value: response.redirected },
    });
    return capped;
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the provider';
  }
}
