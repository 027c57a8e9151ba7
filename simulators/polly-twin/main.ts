// `npm run polly-twin`: the local twin of Amazon Polly's speech synthesis as its own process
// (docs/features/voices.md#the-polly-twin). It needs no database: its voices are a fixed list, its audio a function.
import { configureLogging } from '../../lib/log';
import { handleStopSignals } from '../../lib/shutdown';
import { twinProcessSettingsOrExit } from '../twin-common/config';
import { loadPollyTwinConfigOrExit } from './config';
import { createPollyTwin } from './server';

const stopConfig = twinProcessSettingsOrExit();
const twinConfig = loadPollyTwinConfigOrExit();
configureLogging({
  level: stopConfig.LOG_LEVEL,
  service: 'polly-twin',
  secrets: twinConfig.POLLY_TWIN_CREDENTIALS.map((entry) => entry.secretAccessKey),
});
// SIGTERM/SIGINT run the steps deferred below within SHUTDOWN_GRACE_MS (docs/operations-stopping.md).
const stop = handleStopSignals({ graceMs: stopConfig.SHUTDOWN_GRACE_MS });
const twin = createPollyTwin({ credentials: twinConfig.POLLY_TWIN_CREDENTIALS, region: twinConfig.POLLY_TWIN_REGION });
stop.defer('polly twin', () => twin.close());
const url = await twin.listen(twinConfig.POLLY_TWIN_PORT, twinConfig.POLLY_TWIN_HOST);
console.log(
  `polly twin listening on ${url} (region ${twinConfig.POLLY_TWIN_REGION}, ${twinConfig.POLLY_TWIN_CREDENTIALS.length} credential(s))`,
);
