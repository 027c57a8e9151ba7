-- Warm transfer (docs/features/conversation/tools.md#warm-transfer): the agent's transfer mode, and on the call the
-- mode asked, the summary the human's leg hears, and how the transfer went.
ALTER TABLE "Agent" ADD COLUMN "transferMode" TEXT NOT NULL DEFAULT 'cold';
ALTER TABLE "Call" ADD COLUMN "transferMode" TEXT,
                   ADD COLUMN "transferSummary" TEXT,
                   ADD COLUMN "transferStatus" TEXT;
