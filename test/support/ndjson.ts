import { expect } from 'vitest';
import { routes } from '../../api/routes';
import { responseProblems } from './response-check';

/**
 * A streamed NDJSON answer read as a client reads it: the raw body, chunk by chunk as the network hands it
 * over, split into lines wherever the chunk boundaries fall. `next()` gives each event as soon as its line
 * is complete; `rest()` reads to the end. Once the body has ended, the whole of it is checked against the
 * route's declaration (every line against the event schema), as test/support/api.ts checks other answers.
 */
export function ndjsonReader(response: Response, method: string, url: string) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const received: Uint8Array[] = [];
  const lines: string[] = [];
  let pending = '';
  let ended = false;

  async function fill(): Promise<boolean> {
    while (!lines.length) {
      if (ended) return false;
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        expect(pending, 'the body ends with a complete line').toBe('');
        const body = Buffer.concat(received);
        expect(
          responseProblems(routes, method, url, { status: response.status, headers: response.headers, body }),
        ).toEqual([]);
        return false;
      }
      received.push(value);
      pending += decoder.decode(value, { stream: true });
      const parts = pending.split('\n');
      pending = parts.pop()!;
      lines.push(...parts);
    }
    return true;
  }

  return {
    chunks: () => received.length,
    async next(): Promise<Record<string, string> | null> {
      return (await fill()) ? (JSON.parse(lines.shift()!) as Record<string, string>) : null;
    },
    async rest(): Promise<Array<Record<string, string>>> {
      const events: Array<Record<string, string>> = [];
      for (let event = await this.next(); event; event = await this.next()) events.push(event);
      return events;
    },
    cancel: () => reader.cancel(),
  };
}
