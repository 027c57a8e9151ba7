-- CreateTable
CREATE TABLE "CarrierDialRefusal" (
    "id" UUID NOT NULL,
    "campaignId" UUID NOT NULL,
    "attemptId" TEXT NOT NULL,
    "error" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CarrierDialRefusal_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "CarrierDialRefusal_campaignId_at_idx" ON "CarrierDialRefusal"("campaignId", "at");
