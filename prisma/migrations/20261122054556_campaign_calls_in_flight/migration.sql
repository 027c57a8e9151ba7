-- AlterTable
ALTER TABLE "Campaign" ADD COLUMN     "callsInFlight" INTEGER NOT NULL DEFAULT 0;


-- Campaigns with calls in flight when this runs start from their true count.
UPDATE "Campaign" c SET "callsInFlight" = d.n
  FROM (SELECT "campaignId", count(*)::int AS n FROM "Call" WHERE status = 'dialing' GROUP BY "campaignId") d
 WHERE c.id = d."campaignId";
