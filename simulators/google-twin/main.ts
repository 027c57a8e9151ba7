// `npm run google-sheets-twin`: the local twin of the Google Sheets API v4 and Google's token endpoint, as its own
// process (docs/features/sheets.md#the-google-sheets-twin). State is in memory.
import { handleStopSignals } from '../../lib/shutdown';
import { loadTwinConfigOrExit } from './config';
import { createGoogleSheetsTwin } from './server';

const config = loadTwinConfigOrExit();
const stop = handleStopSignals({ graceMs: 5_000 });
const twin = createGoogleSheetsTwin({
  accounts: config.GOOGLE_TWIN_ACCOUNTS,
  writesPerWindow: config.GOOGLE_TWIN_WRITES_PER_WINDOW,
  quotaWindowMs: config.GOOGLE_TWIN_QUOTA_WINDOW_MS,
});
stop.defer('google sheets twin', () => twin.close());
const url = await twin.listen(config.GOOGLE_TWIN_PORT, config.GOOGLE_TWIN_HOST);
console.log(
  `google sheets twin listening on ${url} (${config.GOOGLE_TWIN_WRITES_PER_WINDOW} writes per ${config.GOOGLE_TWIN_QUOTA_WINDOW_MS} ms per account)`,
);
