// A process for test/shutdown.test.ts: lib/shutdown.ts as an entry point uses it, with the stop steps
// STOP_STEPS names (comma-separated `name:behaviour`, registered in that order; behaviour `ms<N>` finishes after
// N ms, `hang` never finishes, `throw` fails), SHUTDOWN_GRACE_MS from the environment, and process.exitCode
// EXIT_CODE when set. It says "ready" once the signals are handled, and keeps running until stopped.
import { loadStopConfigOrExit } from '../../lib/config';
import { configureLogging, log } from '../../lib/log';
import { handleStopSignals } from '../../lib/shutdown';

configureLogging({ level: 'info', service: 'stopping-process' });
const stop = handleStopSignals({ graceMs: loadStopConfigOrExit().SHUTDOWN_GRACE_MS });
for (const spec of (process.env.STOP_STEPS ?? '').split(',').filter(Boolean)) {
  const [name, behaviour] = spec.split(':') as [string, string];
  stop.defer(name, async () => {
    log.info({ step: name }, 'step started');
    if (behaviour === 'hang') await new Promise(() => {});
    if (behaviour === 'throw') throw new Error(`${name} failed`);
    await new Promise((resolve) => setTimeout(resolve, Number(behaviour.replace(/^ms/, ''))));
    log.info({ step: name }, 'step finished');
  });
}
if (process.env.EXIT_CODE) process.exitCode = Number(process.env.EXIT_CODE);
// What a server's listening socket would do: keep the process alive.
setInterval(() => {}, 60_000);
log.info('ready');
