-- CreateTable
CREATE TABLE "TwilioTwinCall" (
    "sid" TEXT NOT NULL,
    "accountSid" TEXT NOT NULL,
    "to" TEXT NOT NULL,
    "from" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "answeredBy" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startTime" TIMESTAMP(3),
    "endTime" TIMESTAMP(3),
    "durationSec" INTEGER,
    "request" JSONB NOT NULL,
    "persona" JSONB,
    "state" JSONB NOT NULL,
    "log" JSONB NOT NULL DEFAULT '[]',
    "hangupRequestedAt" TIMESTAMP(3),
    "redirect" JSONB,

    CONSTRAINT "TwilioTwinCall_pkey" PRIMARY KEY ("sid")
);

-- CreateTable
CREATE TABLE "TwilioTwinCallback" (
    "callSid" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "params" JSONB NOT NULL,
    "deliveredAt" TIMESTAMP(3),

    CONSTRAINT "TwilioTwinCallback_pkey" PRIMARY KEY ("callSid","seq")
);

-- CreateIndex
CREATE INDEX "TwilioTwinCall_accountSid_createdAt_idx" ON "TwilioTwinCall"("accountSid", "createdAt");

-- AddForeignKey
ALTER TABLE "TwilioTwinCallback" ADD CONSTRAINT "TwilioTwinCallback_callSid_fkey" FOREIGN KEY ("callSid") REFERENCES "TwilioTwinCall"("sid") ON DELETE CASCADE ON UPDATE CASCADE;

