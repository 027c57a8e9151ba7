-- AlterTable
ALTER TABLE "CrmConnection" ADD COLUMN     "webhookSecretCiphertext" TEXT,
ADD COLUMN     "webhookSecretKeyId" TEXT,
ADD COLUMN     "webhookSecretNonce" TEXT,
ALTER COLUMN "secret" DROP NOT NULL;

-- AlterTable
ALTER TABLE "ResultWebhookEndpoint" ADD COLUMN     "secretCiphertext" TEXT,
ADD COLUMN     "secretKeyId" TEXT,
ADD COLUMN     "secretNonce" TEXT,
ALTER COLUMN "secret" DROP NOT NULL;


-- Added by hand: a removed endpoint or connection never signs or verifies again, so its clear secret is not kept. The
-- live ones are sealed, and their clear column emptied, by `npm run admin -- secrets rekey` (it holds the key ring,
-- which SQL does not): docs/providers.md#secrets-once-kept-in-clear.
UPDATE "CrmConnection" SET secret = NULL WHERE "deletedAt" IS NOT NULL AND secret IS NOT NULL;
UPDATE "ResultWebhookEndpoint" SET secret = NULL WHERE "deletedAt" IS NOT NULL AND secret IS NOT NULL;
