import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Git-ignored state of `npm start`: database cluster, Temporal store, the dev key. */
export const devDataDir = path.resolve(process.env.WORKSPACE_DATA_DIR ?? path.join(projectRoot, '.data'));
export const devStackStatePath = path.join(devDataDir, 'dev-stack.json');
export const devApiKeyPath = path.join(devDataDir, 'dev-api-key');
