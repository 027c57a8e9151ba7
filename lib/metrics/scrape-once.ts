/**
 * Several gauges filled by one query: the first gauge collected in a scrape runs `read`, the others of
 * the same scrape (within 100 ms) share its answer.
 */
export function readOncePerScrape<Value>(read: () => Promise<Value>): () => Promise<Value> {
  let last: Promise<Value> | null = null;
  return () =>
    (last ??= read().finally(() => {
      setTimeout(() => (last = null), 100).unref();
    }));
}
