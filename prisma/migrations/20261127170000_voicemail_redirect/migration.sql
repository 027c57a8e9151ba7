-- AlterTable
ALTER TABLE "Call" ADD COLUMN     "voicemailRedirectAt" TIMESTAMP(3);

