-- AlterTable
ALTER TABLE "WhatsAppMessage" ADD COLUMN     "parameters" JSONB;

