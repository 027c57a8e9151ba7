// For test/exports/export-worker.test.ts: `node --import ./test/support/record-imports.mjs …` appends the URL of
// every module the process resolves through the ESM loader to RECORD_IMPORTS_FILE.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';

const file = process.env.RECORD_IMPORTS_FILE;
if (file && !process.env.RECORD_IMPORTS_HOOK) {
  // The hook itself runs on the loader's thread; this module is loaded there too, as its registration.
  register(import.meta.url, import.meta.url);
  process.env.RECORD_IMPORTS_HOOK = 'registered';
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(file, `${resolved.url}\n`);
  return resolved;
}
