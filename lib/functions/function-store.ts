import type { Prisma } from '../../generated/prisma/client';
import type { Database } from '../database';
import { personNumberSql } from '../calls/person-number';
import type { RunSql } from '../run-sql';
import type { FunctionDefinition, PresetContext } from './function-definition';

/*
 * The custom functions' SQL (docs/features/functions.md): the operator's functions and bindings (Prisma), and what a
 * call's conversation reads and records when it calls one (plain SQL, the conversation's RunSql).
 */

type Tx = Prisma.TransactionClient;

export async function liveFunctionNamed(tx: Tx, workspaceId: string, name: string) {
  return tx.customFunction.findFirst({ where: { workspaceId, name, deletedAt: null }, select: { id: true } });
}

export async function insertFunction(tx: Tx, workspaceId: string, definition: FunctionDefinition) {
  return tx.customFunction.create({
    data: { workspaceId, ...definition, parameters: definition.parameters as Prisma.InputJsonValue },
    select: { id: true, name: true },
  });
}

export async function liveFunctionOf(db: Database, workspaceId: string, id: string) {
  return db.customFunction.findFirst({ where: { id, workspaceId, deletedAt: null }, select: { id: true } });
}

export async function liveAgentOf(db: Database, workspaceId: string, id: string) {
  return db.agent.findFirst({ where: { id, workspaceId, deletedAt: null }, select: { id: true, script: true } });
}

/** Bound, or its binding's script step changed. */
export async function upsertBinding(db: Database, agentId: string, functionId: string, afterQuestion: number | null) {
  await db.agentFunction.upsert({
    where: { agentId_functionId: { agentId, functionId } },
    create: { agentId, functionId, afterQuestion },
    update: { afterQuestion },
  });
}

export async function deleteBinding(db: Database, agentId: string, functionId: string): Promise<boolean> {
  const { count } = await db.agentFunction.deleteMany({ where: { agentId, functionId } });
  return count > 0;
}

/** The workspace's live functions with the agents they are bound to, newest first. */
export async function liveFunctionsOfWorkspace(db: Database, workspaceId: string) {
  return db.customFunction.findMany({
    where: { workspaceId, deletedAt: null },
    include: { agents: { select: { agentId: true, afterQuestion: true }, orderBy: { agentId: 'asc' } } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
}

/** Removed (soft: its invocations stay on their calls) and unbound from every agent. */
export async function markFunctionDeleted(db: Database, workspaceId: string, id: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const { count } = await tx.customFunction.updateMany({
      where: { id, workspaceId, deletedAt: null },
      data: { deletedAt: new Date() },
    });
    if (count > 0) await tx.agentFunction.deleteMany({ where: { functionId: id } });
    return count > 0;
  });
}

/** A call's function invocations, oldest first (GET /calls/{id}). */
export async function invocationsOfCall(db: Database, callId: string) {
  return db.functionInvocation.findMany({
    where: { callId },
    include: { function: { select: { name: true } } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

/** A function as the conversation offers and calls it. */
export interface BoundFunctionRow {
  id: string;
  workspaceId: string;
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  presets: Record<string, string>;
  url: string;
  method: string;
  timeoutMs: number;
  fillerLine: string | null;
  slowLine: string | null;
  /** The binding's script step (null: the model's choice only). */
  afterQuestion: number | null;
}

const BOUND_FUNCTION_COLUMNS = `f.id::text, f."workspaceId"::text AS "workspaceId", f.name, f.description, f.parameters,
  f.presets, f.url, f.method, f."timeoutMs", f."fillerLine", f."slowLine", af."afterQuestion"`;

/** The live functions bound to an agent, by name (a web test session's: it has no call). */
export async function functionsOfAgent(sql: RunSql, agentId: string): Promise<BoundFunctionRow[]> {
  return sql<BoundFunctionRow>(
    {
      name: 'functions_of_agent',
      text: `SELECT ${BOUND_FUNCTION_COLUMNS}
               FROM "Agent" a JOIN "AgentFunction" af ON af."agentId" = a.id
               JOIN "CustomFunction" f ON f.id = af."functionId" AND f."deletedAt" IS NULL
                AND f."workspaceId" = a."workspaceId"
              WHERE a.id = $1::uuid ORDER BY f.name`,
    },
    agentId,
  );
}

/** The live functions bound to a call's agent, by name. */
export async function functionsOfCall(sql: RunSql, callId: string): Promise<BoundFunctionRow[]> {
  return sql<BoundFunctionRow>(
    {
      name: 'functions_of_call',
      text: `SELECT ${BOUND_FUNCTION_COLUMNS}
               FROM "Call" c JOIN "AgentFunction" af ON af."agentId" = c."agentId"
               JOIN "CustomFunction" f ON f.id = af."functionId" AND f."deletedAt" IS NULL
                AND f."workspaceId" = c."workspaceId"
              WHERE c.id = $1::uuid ORDER BY f.name`,
    },
    callId,
  );
}

/** What a call's presets are rendered from. */
export async function presetContextOf(sql: RunSql, callId: string): Promise<PresetContext | null> {
  const [row] = await sql<{
    leadId: string | null;
    leadName: string | null;
    leadPhone: string | null;
    leadFields: Record<string, unknown> | null;
    testLead: { name?: string; fields?: Record<string, unknown> } | null;
    campaignId: string | null;
    agentId: string | null;
  }>(
    {
      name: 'functions_preset_context',
      text: `SELECT l.id::text AS "leadId", l.name AS "leadName", ${personNumberSql('c', 'l.phone')} AS "leadPhone",
                    l.fields AS "leadFields", c."testLead", c."campaignId"::text AS "campaignId",
                    c."agentId"::text AS "agentId"
               FROM "Call" c LEFT JOIN "Lead" l ON l.id = c."leadId" WHERE c.id = $1::uuid`,
    },
    callId,
  );
  if (!row) return null;
  return {
    callId,
    leadId: row.leadId,
    leadName: row.leadName ?? row.testLead?.name ?? null,
    leadPhone: row.leadPhone,
    leadFields: row.leadFields ?? row.testLead?.fields ?? {},
    campaignId: row.campaignId,
    agentId: row.agentId,
  };
}

/** The sealed secrets that sign now, newest first (lib/functions/signing-secrets.ts opens them). */
export async function liveSecretRows(sql: RunSql, workspaceId: string) {
  return sql<{ id: string; workspaceId: string; secretKeyId: string; secretNonce: string; secretCiphertext: string }>(
    {
      name: 'functions_live_secrets',
      text: `SELECT id::text, "workspaceId"::text AS "workspaceId", "secretKeyId", "secretNonce", "secretCiphertext"
               FROM "FunctionSigningSecret"
              WHERE "workspaceId" = $1::uuid AND ("retiresAt" IS NULL OR "retiresAt" > now() AT TIME ZONE 'UTC')
              ORDER BY "createdAt" DESC, id DESC`,
    },
    workspaceId,
  );
}

/**
 * The invocation recorded as sending, before its request leaves: its idempotency key is unique, so a second try of the
 * same tool call finds the first one's row instead (null here) and is not sent.
 */
export async function startInvocation(
  sql: RunSql,
  row: { workspaceId: string; callId: string; functionId: string; toolCallId: string; idempotencyKey: string },
  args: Record<string, unknown>,
): Promise<string | null> {
  const [inserted] = await sql<{ id: string }>(
    {
      name: 'functions_start_invocation',
      text: `INSERT INTO "FunctionInvocation"
               (id, "workspaceId", "callId", "functionId", "toolCallId", "idempotencyKey", arguments, status, "createdAt")
             VALUES (gen_random_uuid(), $1::uuid, $2::uuid, $3::uuid, $4, $5, $6::jsonb, 'sending', now() AT TIME ZONE 'UTC')
             ON CONFLICT ("idempotencyKey") DO NOTHING RETURNING id::text`,
    },
    row.workspaceId,
    row.callId,
    row.functionId,
    row.toolCallId,
    row.idempotencyKey,
    JSON.stringify(args),
  );
  return inserted?.id ?? null;
}

/** A second try of a tool call: the first one's status; one left sending (its process stopped) becomes unknown. */
export async function settleRepeatedInvocation(sql: RunSql, idempotencyKey: string) {
  const [row] = await sql<{ status: string; httpStatus: number | null }>(
    {
      name: 'functions_repeated_invocation',
      text: `UPDATE "FunctionInvocation" SET status = CASE WHEN status = 'sending' THEN 'unknown' ELSE status END
              WHERE "idempotencyKey" = $1 RETURNING status, "httpStatus"`,
    },
    idempotencyKey,
  );
  return row ?? null;
}

export async function finishInvocation(
  sql: RunSql,
  id: string,
  outcome: { status: string; httpStatus: number | null; durationMs: number; resultBytes: number | null },
) {
  await sql(
    {
      name: 'functions_finish_invocation',
      text: `UPDATE "FunctionInvocation" SET status = $2, "httpStatus" = $3, "durationMs" = $4, "resultBytes" = $5
              WHERE id = $1::uuid`,
    },
    id,
    outcome.status,
    outcome.httpStatus,
    outcome.durationMs,
    outcome.resultBytes,
  );
}
