-- CreateTable
CREATE TABLE "TestSession" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "agentId" UUID NOT NULL,
    "keyId" UUID,
    "lead" JSONB NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "tokenExpiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "connectedAt" TIMESTAMP(3),
    "lastActivityAt" TIMESTAMP(3),
    "endedAt" TIMESTAMP(3),
    "endReason" TEXT,
    "outcome" TEXT,
    "durationMs" INTEGER,

    CONSTRAINT "TestSession_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TestSessionTurn" (
    "sessionId" UUID NOT NULL,
    "step" INTEGER NOT NULL,
    "part" INTEGER NOT NULL,
    "speaker" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "tool" JSONB,
    "offsetMs" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TestSessionTurn_pkey" PRIMARY KEY ("sessionId","step","part")
);

-- CreateIndex
CREATE INDEX "TestSession_workspaceId_createdAt_idx" ON "TestSession"("workspaceId", "createdAt");

-- AddForeignKey
ALTER TABLE "TestSessionTurn" ADD CONSTRAINT "TestSessionTurn_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "TestSession"("id") ON DELETE CASCADE ON UPDATE CASCADE;

