// The Temporal Web UI server (github.com/temporalio/ui-server, the UI docker-compose.yml runs as temporalio/ui)
// in front of a Temporal frontend: the same UI the dev server embeds, as a process of its own.
import { mkdirSync, openSync, closeSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startProcess, waitFor, type ManagedProcess } from './child-process';

export interface TemporalUi {
  readonly url: string;
  readonly process: ManagedProcess;
}

export async function startTemporalUi(options: {
  serverPath: string;
  port: number;
  /** Holds ui-config/ and the UI's log (temporal-ui.log). */
  rootDir: string;
  /** The Temporal frontend's gRPC address. */
  address: string;
  /** Where the browser decodes sealed payloads (docs/temporal-ui.md#the-codec-server); unset: no codec. */
  codecEndpoint?: string;
}): Promise<TemporalUi> {
  const configDir = path.join(options.rootDir, 'ui-config');
  mkdirSync(configDir, { recursive: true });
  const config = {
    temporalGrpcAddress: options.address,
    host: '127.0.0.1',
    port: options.port,
    enableUi: true,
    defaultNamespace: 'default',
    showTemporalSystemNamespace: false,
    notifyOnNewVersion: false,
    refreshInterval: '1m',
    cors: { cookieInsecure: true, allowOrigins: [] },
    auth: { enabled: false },
    ...(options.codecEndpoint && { codec: { endpoint: options.codecEndpoint } }),
  };
  // YAML is a superset of JSON; the UI server reads base.yaml, then the environment's file.
  writeFileSync(path.join(configDir, 'base.yaml'), JSON.stringify(config, null, 2));
  writeFileSync(path.join(configDir, 'cluster.yaml'), JSON.stringify(config, null, 2));
  const logFile = path.join(options.rootDir, 'temporal-ui.log');
  const log = openSync(logFile, 'a');
  const ui = startProcess(
    'temporal-ui',
    options.serverPath,
    ['--root', options.rootDir, '--config', 'ui-config', '--env', 'cluster', 'start'],
    { stdio: ['ignore', log, log] },
  );
  closeSync(log);
  const url = `http://127.0.0.1:${options.port}`;
  await waitFor(
    `Temporal Web UI (log: ${logFile})`,
    async () => {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`answered ${response.status}`);
    },
    60_000,
    ui.exited,
  );
  return { url, process: ui };
}
