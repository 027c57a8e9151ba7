import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll } from 'vitest';

/** Debian's chromium, which scripts/lib/ensure-tools.sh installs; CHROMIUM_PATH names another build. */
export const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** A headless chromium for this test file, closed after it. A missing browser fails the test: never skipped. */
export async function useChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `chromium not found at ${chromiumPath}: \`npm test\` installs Debian's chromium when run as root (apt-get install chromium), or set CHROMIUM_PATH`,
    );
  }
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  afterAll(() => browser.close());
  return browser;
}
