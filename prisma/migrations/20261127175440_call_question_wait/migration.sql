-- CreateTable
CREATE TABLE "CallQuestionWait" (
    "callId" UUID NOT NULL,
    "step" INTEGER NOT NULL,
    "dueAt" TIMESTAMP(3),

    CONSTRAINT "CallQuestionWait_pkey" PRIMARY KEY ("callId")
);

-- CreateIndex
CREATE INDEX "CallQuestionWait_dueAt_idx" ON "CallQuestionWait"("dueAt");

-- AddForeignKey
ALTER TABLE "CallQuestionWait" ADD CONSTRAINT "CallQuestionWait_callId_fkey" FOREIGN KEY ("callId") REFERENCES "Call"("id") ON DELETE CASCADE ON UPDATE CASCADE;

