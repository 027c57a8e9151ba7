-- AlterTable
ALTER TABLE "Call" ADD COLUMN     "relaySocketAt" TIMESTAMP(3);

