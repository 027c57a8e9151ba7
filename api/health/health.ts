import type { AppServices } from '../app-services';

export type DependencyState = 'up' | 'down';

export interface HealthReport {
  status: 'ok' | 'unavailable';
  database: DependencyState;
  temporal: DependencyState;
}

const PROBE_TIMEOUT_MS = 2_000;

export async function checkHealth({ db, temporalConnection }: AppServices): Promise<HealthReport> {
  const [database, temporal] = await Promise.all([
    probe(() => db.$queryRaw`SELECT 1`),
    probe(() =>
      temporalConnection.withDeadline(Date.now() + PROBE_TIMEOUT_MS, () =>
        temporalConnection.workflowService.getSystemInfo({}),
      ),
    ),
  ]);
  return { status: database === 'up' && temporal === 'up' ? 'ok' : 'unavailable', database, temporal };
}

async function probe(check: () => Promise<unknown>): Promise<DependencyState> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), PROBE_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'up';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}
