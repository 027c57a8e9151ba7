import type { Carrier, CarrierCallSnapshot, CarrierDialRequest } from '../calls/carrier';
import type { Transcript } from '../calls/transcript';
import { createJsonHttp, type JsonHttpResponse } from '../http/json-http';

/** Sockets kept open to the carrier: a worker's dials at once (its activity slots) need no more. */
const CARRIER_SOCKETS = 64;

/** The Carrier over the simulated carrier's REST API (server.ts), as a real carrier's client speaks to it. */
export function createSimulatedCarrierClient({ baseUrl }: { baseUrl: string }): Carrier {
  const http = createJsonHttp({ sockets: CARRIER_SOCKETS });
  const call = async (method: string, path: string, body?: unknown): Promise<JsonHttpResponse> => {
    const response = await http.request(method, `${baseUrl}${path}`, { body, timeoutMs: 10_000 });
    if ((response.status < 200 || response.status > 299) && response.status !== 404)
      throw new Error(`simulated carrier: ${method} ${path} answered ${response.status}`);
    return response;
  };
  const found = <T>(response: JsonHttpResponse): T | null =>
    response.status === 404 ? null : (JSON.parse(response.text) as T);

  return {
    name: 'simulated',
    async dial(request: CarrierDialRequest) {
      const response = await call('POST', '/calls', request);
      if (response.status === 404) throw new Error('simulated carrier: POST /calls answered 404');
      const { providerCallId } = JSON.parse(response.text) as { providerCallId: string };
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
      await call('POST', `/calls/${encodeURIComponent(providerCallId)}/hangup`);
    },
    async transcript(providerCallId) {
      const body = found<{ transcript: Transcript }>(
        await call('GET', `/calls/${encodeURIComponent(providerCallId)}/transcript`),
      );
      return body?.transcript ?? null;
    },
  };
}
