-- AlterTable
ALTER TABLE "Call" ADD COLUMN     "leadSettledAt" TIMESTAMP(3),
ADD COLUMN     "settlesLeadOn" TEXT[] DEFAULT ARRAY[]::TEXT[];

