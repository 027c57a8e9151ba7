import { DefaultLogger, Runtime, makeTelemetryFilterString, type LogEntry, type LogLevel } from '@temporalio/worker';
import { log, type LogLevel as ProcessLogLevel } from '../lib/log';

const SDK_LEVELS: Record<ProcessLogLevel, LogLevel> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
  // The SDK has no "off": errors only, which pino then drops at its own silent level.
  silent: 'ERROR',
};

/**
 * The SDK's log lines (its own, the workflows' `log` through the sink, activities' Context.log) into the
 * process's pino logger. The SDK puts the ids it knows in `meta`: workflowId, runId, workflowType,
 * activityId, activityType, taskQueue, namespace.
 */
function toPino({ level, message, meta }: LogEntry): void {
  log[level.toLowerCase() as Lowercase<LogLevel>]({ ...meta, source: 'temporal-sdk' }, message);
}

/**
 * Installs the process's Temporal Runtime (once per process: the SDK allows one): its logger is pino,
 * its native core's warnings are forwarded to it, and when a port is given its Prometheus exporter
 * serves the SDK's runtime metrics (task slots, schedule-to-start latency, poll failures...) at
 * http://<host>:<port>/metrics. A port already taken is logged and the runtime installed without it.
 */
export function installWorkerRuntime(setup: {
  level: ProcessLogLevel;
  metrics: { host: string; port: number } | null;
}) {
  const logger = new DefaultLogger(SDK_LEVELS[setup.level], toPino);
  const logging = { filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }), forward: {} };
  // The process's own stop (lib/shutdown.ts) shuts the workers down on SIGTERM and SIGINT; the SDK's handlers
  // would only shut them down, and keep Node from ending the process on those signals.
  const shutdownSignals: NodeJS.Signals[] = [];
  if (setup.metrics) {
    const bindAddress = `${setup.metrics.host}:${setup.metrics.port}`;
    try {
      Runtime.install({
        logger,
        shutdownSignals,
        telemetryOptions: { logging, metrics: { prometheus: { bindAddress } } },
      });
      log.info({ endpoint: 'temporal-sdk', url: `http://${bindAddress}/metrics` }, 'metrics endpoint listening');
      return;
    } catch (error) {
      log.error({ err: error, endpoint: 'temporal-sdk', bindAddress }, 'metrics endpoint not started');
    }
  }
  Runtime.install({ logger, shutdownSignals, telemetryOptions: { logging } });
}
