import type { Carrier, CarrierCallSnapshot, CarrierDialRequest } from '../../activities/providers/carrier';
import type { Transcript } from '../../lib/calls/transcript';

/** The Carrier over the simulated carrier's REST API (server.ts), as a real carrier's client speaks to it. */
export function createSimulatedCarrierClient({ baseUrl }: { baseUrl: string }): Carrier {
  const call = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok && response.status !== 404)
      throw new Error(`simulated carrier: ${method} ${path} answered ${response.status}`);
    return response;
  };
  const found = async <T>(response: Response): Promise<T | null> =>
    response.status === 404 ? (await response.body?.cancel(), null) : ((await response.json()) as T);

  return {
    name: 'simulated',
    async dial(request: CarrierDialRequest) {
      const response = await call('POST', '/calls', request);
      if (response.status === 404) throw new Error('simulated carrier: POST /calls answered 404');
      const { providerCallId } = (await response.json()) as { providerCallId: string };
      return { providerCallId };
    },
    async lookup(reference) {
      const path =
        'providerCallId' in reference
          ? `/calls/${encodeURIComponent(reference.providerCallId)}`
          : `/calls?attemptId=${encodeURIComponent(reference.attemptId)}`;
      return found<CarrierCallSnapshot>(await call('GET', path));
    },
    async hangup(providerCallId) {
      const response = await call('POST', `/calls/${encodeURIComponent(providerCallId)}/hangup`);
      await response.body?.cancel();
    },
    async transcript(providerCallId) {
      const body = await found<{ transcript: Transcript }>(
        await call('GET', `/calls/${encodeURIComponent(providerCallId)}/transcript`),
      );
      return body?.transcript ?? null;
    },
  };
}
