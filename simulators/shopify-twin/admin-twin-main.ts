// `npm run store-twin`: the store twin's Admin GraphQL API as its own process (docs/features/crm.md#the-store-twin).
import { handleStopSignals } from '../../lib/shutdown';
import { twinProcessSettingsOrExit } from '../twin-common/config';
import { createStoreAdminTwin, twinCustomers } from './admin-twin';
import { loadStoreTwinConfigOrExit } from './admin-twin-config';

const settings = loadStoreTwinConfigOrExit();
const stop = handleStopSignals({ graceMs: twinProcessSettingsOrExit().SHUTDOWN_GRACE_MS });
const twin = createStoreAdminTwin({
  shops: settings.STORE_TWIN_SHOPS.map((shop) => ({ ...shop, customers: twinCustomers(shop.customers) })),
  bucketSize: settings.STORE_TWIN_BUCKET_SIZE,
  restoreRate: settings.STORE_TWIN_RESTORE_RATE,
});
stop.defer('store twin', () => twin.close());
const url = await twin.listen(settings.STORE_TWIN_PORT, settings.STORE_TWIN_HOST);
console.log(
  `store twin listening on ${url} (${settings.STORE_TWIN_SHOPS.map((shop) => shop.shopDomain).join(', ')}; bucket ${settings.STORE_TWIN_BUCKET_SIZE} points, ${settings.STORE_TWIN_RESTORE_RATE}/s)`,
);
