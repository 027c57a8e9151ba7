-- AlterTable
ALTER TABLE "SimulatedProviderCall" ADD COLUMN     "statusCallbackEvents" JSONB;

