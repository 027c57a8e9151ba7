-- CreateEnum
CREATE TYPE "ConversationEngine" AS ENUM ('relay', 'gather');

-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "conversationEngine" "ConversationEngine" NOT NULL DEFAULT 'relay';

