-- AlterTable
ALTER TABLE "Call" ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'campaign',
ADD COLUMN     "testLead" JSONB,
ADD COLUMN     "toNumber" TEXT,
ALTER COLUMN "leadId" DROP NOT NULL,
ALTER COLUMN "campaignId" DROP NOT NULL;


-- A campaign's call has its campaign and lead; a test call has neither, and records the number it dialed.
ALTER TABLE "Call" ADD CONSTRAINT "Call_kind_check" CHECK (
  (kind = 'campaign' AND "campaignId" IS NOT NULL AND "leadId" IS NOT NULL)
  OR (kind = 'test' AND "campaignId" IS NULL AND "leadId" IS NULL AND "toNumber" IS NOT NULL)
);
