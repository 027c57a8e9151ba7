import { z } from 'zod';
import { withRenamedSettings } from '../../lib/renamed-settings';
import { jsonSetting, twinSettingsOrExit } from '../twin-common/config';

/** The store twin's settings (docs/features/crm.md#the-store-twin). */
const shopsSchema = z
  .array(
    z.object({
      shopDomain: z.string().regex(/^[a-z0-9][a-z0-9-]*\.myshopify\.com$/),
      accessToken: z.string().min(8),
      /** How many customers the shop has (simulators/shopify-twin/admin-twin.ts twinCustomers). */
      customers: z.number().int().min(0).max(1_000_000),
    }),
  )
  .min(1);

/**
 * Named SHOPIFY_TWIN_* as the twin is (provider shopify-twin); formerly STORE_TWIN_*, still read while the new name is
 * unset.
 */
export const shopifyTwinConfigSchema = withRenamedSettings(
  {
    SHOPIFY_TWIN_PORT: 'STORE_TWIN_PORT',
    SHOPIFY_TWIN_HOST: 'STORE_TWIN_HOST',
    SHOPIFY_TWIN_SHOPS: 'STORE_TWIN_SHOPS',
    SHOPIFY_TWIN_BUCKET_SIZE: 'STORE_TWIN_BUCKET_SIZE',
    SHOPIFY_TWIN_RESTORE_RATE: 'STORE_TWIN_RESTORE_RATE',
  },
  z.object({
    SHOPIFY_TWIN_PORT: z.coerce.number().int().min(0).max(65535).default(3600),
    SHOPIFY_TWIN_HOST: z.string().default('127.0.0.1'),
    /** JSON: [{ shopDomain, accessToken, customers }]; default: one development shop of 1,000 customers. */
    SHOPIFY_TWIN_SHOPS: jsonSetting(shopsSchema, () => [
      { shopDomain: 'twin-store.myshopify.com', accessToken: 'shpat_store_twin_development', customers: 1000 },
    ]),
    /** The cost bucket: Shopify's standard 1000 points restoring 50 a second; scale both down to test throttling. */
    SHOPIFY_TWIN_BUCKET_SIZE: z.coerce.number().int().min(1).max(1_000_000).default(1000),
    SHOPIFY_TWIN_RESTORE_RATE: z.coerce.number().positive().max(1_000_000).default(50),
  }),
);
export type ShopifyTwinConfig = z.infer<typeof shopifyTwinConfigSchema>;

export const loadShopifyTwinConfigOrExit = (env: NodeJS.ProcessEnv = process.env): ShopifyTwinConfig =>
  twinSettingsOrExit(shopifyTwinConfigSchema, env);
