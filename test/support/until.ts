/** Reads until done() holds, every 100 ms; fails naming the last value read. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until `url` answers a GET with a 2xx (a server the test started, coming up). */
export async function untilServing(url: string): Promise<void> {
  await until(
    () =>
      fetch(url).then(
        (response) => response.ok,
        () => false,
      ),
    Boolean,
  );
}
