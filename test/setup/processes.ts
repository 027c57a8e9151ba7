// Every test file's last afterAll (setupFiles run before the file, and vitest runs afterAll hooks in reverse):
// the processes its tests started outside any test are stopped here (test/support/processes.ts).
import { afterAll } from 'vitest';
import { runFileEndCleanups } from '../support/processes';

afterAll(() => runFileEndCleanups());
