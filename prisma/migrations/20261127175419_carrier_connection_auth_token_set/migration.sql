-- AlterTable
ALTER TABLE "CarrierConnection" ADD COLUMN     "authTokenSet" BOOLEAN NOT NULL DEFAULT false;

-- Every live Twilio connection made with the auth token holds it; those made with an API key pair before this
-- migration hold only the key's secret (docs/features/carriers.md#callbacks-of-an-api-key-connection).
UPDATE "CarrierConnection" SET "authTokenSet" = true
 WHERE "accountSid" IS NOT NULL AND "apiKeySid" IS NULL AND "deletedAt" IS NULL;
