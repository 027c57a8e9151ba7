import { Connection } from '@temporalio/client';
import { freePort, startProcess, waitFor, type ManagedProcess } from './child-process';

/** Search attributes the workflows set; registered at start so the Web UI can filter on them. */
export const SEARCH_ATTRIBUTES = [
  'CampaignId=Keyword',
  'WorkspaceId=Keyword',
  'JourneyStatus=Keyword',
  'JourneyWorkflowId=Keyword',
  'JourneyNodeId=Keyword',
];

export interface EmbeddedTemporalOptions {
  cliPath: string;
  port: number;
  /** null: headless (tests). */
  uiPort: number | null;
  /** null: in memory, lost when the server stops (tests). */
  dbFile: string | null;
  quiet?: boolean;
  /** Where the Web UI's browser decodes sealed payloads (docs/temporal-ui.md#the-codec-server); unset: no codec. */
  uiCodecEndpoint?: string;
}

export interface EmbeddedTemporal {
  readonly address: string;
  readonly uiUrl: string | null;
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

export async function startEmbeddedTemporal(options: EmbeddedTemporalOptions): Promise<EmbeddedTemporal> {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--http-port',
    String(await freePort()),
    '--metrics-port',
    String(await freePort()),
    '--log-level',
    'error',
    ...SEARCH_ATTRIBUTES.flatMap((attribute) => ['--search-attribute', attribute]),
    ...(options.uiPort === null ? ['--headless'] : ['--ui-port', String(options.uiPort)]),
    ...(options.uiPort !== null && options.uiCodecEndpoint ? ['--ui-codec-endpoint', options.uiCodecEndpoint] : []),
    ...(options.dbFile === null ? [] : ['--db-filename', options.dbFile]),
  ];
  const server = startProcess('temporal', options.cliPath, args, { quiet: options.quiet });
  const address = `127.0.0.1:${options.port}`;
  await waitFor(
    'Temporal server',
    async () => {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: 'default' });
      } finally {
        await connection.close();
      }
    },
    60_000,
    server.exited,
  );
  return {
    address,
    uiUrl: options.uiPort === null ? null : `http://127.0.0.1:${options.uiPort}`,
    process: server,
    stop: () => server.stop('SIGTERM', 15_000),
  };
}
