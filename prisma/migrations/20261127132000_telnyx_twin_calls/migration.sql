-- CreateTable
CREATE TABLE "TelnyxTwinCall" (
    "callControlId" TEXT NOT NULL,
    "callLegId" TEXT NOT NULL,
    "callSessionId" TEXT NOT NULL,
    "account" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "commandId" TEXT,
    "to" TEXT NOT NULL,
    "from" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "hangupCause" TEXT,
    "amdResult" TEXT,
    "clientState" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "answeredAt" TIMESTAMP(3),
    "endTime" TIMESTAMP(3),
    "durationSec" INTEGER,
    "request" JSONB NOT NULL,
    "persona" JSONB,
    "state" JSONB NOT NULL,
    "commands" JSONB NOT NULL DEFAULT '[]',
    "log" JSONB NOT NULL DEFAULT '[]',

    CONSTRAINT "TelnyxTwinCall_pkey" PRIMARY KEY ("callControlId")
);

-- CreateTable
CREATE TABLE "TelnyxTwinWebhook" (
    "callControlId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "event" JSONB NOT NULL,
    "deliveredAt" TIMESTAMP(3),

    CONSTRAINT "TelnyxTwinWebhook_pkey" PRIMARY KEY ("callControlId","seq")
);

-- CreateIndex
CREATE INDEX "TelnyxTwinCall_account_createdAt_idx" ON "TelnyxTwinCall"("account", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "TelnyxTwinCall_account_commandId_key" ON "TelnyxTwinCall"("account", "commandId");

-- AddForeignKey
ALTER TABLE "TelnyxTwinWebhook" ADD CONSTRAINT "TelnyxTwinWebhook_callControlId_fkey" FOREIGN KEY ("callControlId") REFERENCES "TelnyxTwinCall"("callControlId") ON DELETE CASCADE ON UPDATE CASCADE;

