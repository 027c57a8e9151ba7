// `npm run store-twin`: the store twin's Admin GraphQL API as its own process (docs/features/crm.md#the-store-twin).
import { handleStopSignals } from '../../lib/shutdown';
import { twinProcessSettingsOrExit } from '../twin-common/config';
import { createStoreAdminTwin, twinCustomers } from './admin-twin';
import { loadShopifyTwinConfigOrExit } from './admin-twin-config';

const settings = loadShopifyTwinConfigOrExit();
const stop = handleStopSignals({ graceMs: twinProcessSettingsOrExit().SHUTDOWN_GRACE_MS });
const twin = createStoreAdminTwin({
  shops: settings.SHOPIFY_TWIN_SHOPS.map((shop) => ({ ...shop, customers: twinCustomers(shop.customers) })),
  bucketSize: settings.SHOPIFY_TWIN_BUCKET_SIZE,
  restoreRate: settings.SHOPIFY_TWIN_RESTORE_RATE,
});
stop.defer('store twin', () => twin.close());
const url = await twin.listen(settings.SHOPIFY_TWIN_PORT, settings.SHOPIFY_TWIN_HOST);
console.log(
  `store twin listening on ${url} (${settings.SHOPIFY_TWIN_SHOPS.map((shop) => shop.shopDomain).join(', ')}; bucket ${settings.SHOPIFY_TWIN_BUCKET_SIZE} points, ${settings.SHOPIFY_TWIN_RESTORE_RATE}/s)`,
);
