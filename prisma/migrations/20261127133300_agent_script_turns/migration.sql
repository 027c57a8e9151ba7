-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "voicemailMessage" TEXT;

-- AlterTable
ALTER TABLE "Call" ADD COLUMN     "voicemailLeftAt" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "CallTurn" (
    "callId" UUID NOT NULL,
    "step" INTEGER NOT NULL,
    "part" INTEGER NOT NULL,
    "speaker" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "confidence" DOUBLE PRECISION,
    "offsetMs" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CallTurn_pkey" PRIMARY KEY ("callId","step","part")
);

-- AddForeignKey
ALTER TABLE "CallTurn" ADD CONSTRAINT "CallTurn_callId_fkey" FOREIGN KEY ("callId") REFERENCES "Call"("id") ON DELETE CASCADE ON UPDATE CASCADE;

