// `npm run calcom-twin`: the local twin of Cal.com's API v2 (slots, reservations, bookings) as its own process
// (docs/features/calendar-twins.md#the-calcom-twin). State is in memory.
import { configureLogging } from '../../lib/log';
import { handleStopSignals } from '../../lib/shutdown';
import { twinProcessSettingsOrExit } from '../twin-common/config';
import { loadCalcomTwinConfigOrExit } from './config';
import { createCalcomTwin } from './server';

const stopConfig = twinProcessSettingsOrExit();
const twinConfig = loadCalcomTwinConfigOrExit();
configureLogging({ level: stopConfig.LOG_LEVEL, service: 'calcom-twin', secrets: twinConfig.CALCOM_TWIN_API_KEYS });
// SIGTERM/SIGINT run the steps deferred below within SHUTDOWN_GRACE_MS (docs/operations-stopping.md).
const stop = handleStopSignals({ graceMs: stopConfig.SHUTDOWN_GRACE_MS });
const twin = createCalcomTwin({
  apiKeys: twinConfig.CALCOM_TWIN_API_KEYS,
  eventTypes: twinConfig.CALCOM_TWIN_EVENT_TYPES,
});
stop.defer('calcom twin', () => twin.close());
const url = await twin.listen(twinConfig.CALCOM_TWIN_PORT, twinConfig.CALCOM_TWIN_HOST);
console.log(
  `calcom twin listening on ${url} (${twinConfig.CALCOM_TWIN_EVENT_TYPES.length} event type(s), ${twinConfig.CALCOM_TWIN_API_KEYS.length} API key(s))`,
);
