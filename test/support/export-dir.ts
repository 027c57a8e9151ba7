import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

/**
 * Where a test file's API and workers put export files unless told otherwise: one directory per test
 * file (each runs in a process of its own), so the API serves what the worker wrote.
 */
export const defaultTestExportDir = path.join(os.tmpdir(), `exports-${randomBytes(6).toString('hex')}`);
