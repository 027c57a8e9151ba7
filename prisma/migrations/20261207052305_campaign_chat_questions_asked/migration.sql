-- AlterTable
ALTER TABLE "Campaign" ADD COLUMN     "chatQuestionsAsked" INTEGER NOT NULL DEFAULT 0;

-- The questions already in a conversation were asked: the count starts from them.
UPDATE "Campaign" c SET "chatQuestionsAsked" = q.asked
  FROM (SELECT "campaignId", count(*)::int AS asked FROM "CampaignChatMessage" WHERE role = 'user' GROUP BY "campaignId") q
 WHERE q."campaignId" = c.id;
