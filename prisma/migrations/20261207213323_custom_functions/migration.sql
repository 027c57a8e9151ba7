-- CreateTable
CREATE TABLE "CustomFunction" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "parameters" JSONB NOT NULL,
    "presets" JSONB NOT NULL DEFAULT '{}',
    "url" TEXT NOT NULL,
    "method" TEXT NOT NULL DEFAULT 'POST',
    "timeoutMs" INTEGER NOT NULL,
    "fillerLine" TEXT,
    "slowLine" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deletedAt" TIMESTAMP(3),

    CONSTRAINT "CustomFunction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AgentFunction" (
    "agentId" UUID NOT NULL,
    "functionId" UUID NOT NULL,
    "afterQuestion" INTEGER,

    CONSTRAINT "AgentFunction_pkey" PRIMARY KEY ("agentId","functionId")
);

-- CreateTable
CREATE TABLE "FunctionSigningSecret" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "secretKeyId" TEXT NOT NULL,
    "secretNonce" TEXT NOT NULL,
    "secretCiphertext" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retiresAt" TIMESTAMP(3),

    CONSTRAINT "FunctionSigningSecret_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "FunctionInvocation" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "callId" UUID NOT NULL,
    "functionId" UUID NOT NULL,
    "toolCallId" TEXT NOT NULL,
    "idempotencyKey" TEXT NOT NULL,
    "arguments" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "httpStatus" INTEGER,
    "durationMs" INTEGER,
    "resultBytes" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "FunctionInvocation_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "CustomFunction_workspaceId_idx" ON "CustomFunction"("workspaceId");

-- CreateIndex
CREATE INDEX "AgentFunction_functionId_idx" ON "AgentFunction"("functionId");

-- CreateIndex
CREATE INDEX "FunctionSigningSecret_workspaceId_idx" ON "FunctionSigningSecret"("workspaceId");

-- CreateIndex
CREATE UNIQUE INDEX "FunctionInvocation_idempotencyKey_key" ON "FunctionInvocation"("idempotencyKey");

-- CreateIndex
CREATE INDEX "FunctionInvocation_callId_createdAt_idx" ON "FunctionInvocation"("callId", "createdAt");

-- CreateIndex
CREATE INDEX "FunctionInvocation_functionId_idx" ON "FunctionInvocation"("functionId");

-- AddForeignKey
ALTER TABLE "AgentFunction" ADD CONSTRAINT "AgentFunction_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AgentFunction" ADD CONSTRAINT "AgentFunction_functionId_fkey" FOREIGN KEY ("functionId") REFERENCES "CustomFunction"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "FunctionInvocation" ADD CONSTRAINT "FunctionInvocation_callId_fkey" FOREIGN KEY ("callId") REFERENCES "Call"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "FunctionInvocation" ADD CONSTRAINT "FunctionInvocation_functionId_fkey" FOREIGN KEY ("functionId") REFERENCES "CustomFunction"("id") ON DELETE CASCADE ON UPDATE CASCADE;

