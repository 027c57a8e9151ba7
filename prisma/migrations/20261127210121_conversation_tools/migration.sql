-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "firstMessage" TEXT,
ADD COLUMN     "instructions" TEXT,
ADD COLUMN     "transferNumber" TEXT;

-- AlterTable
ALTER TABLE "Call" ADD COLUMN     "callbackAt" TIMESTAMP(3),
ADD COLUMN     "conversationOutcome" TEXT,
ADD COLUMN     "transferRequestedAt" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "CallTurn" ADD COLUMN     "tool" JSONB;

