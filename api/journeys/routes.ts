import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { leadFieldsSchema } from '../../lib/campaigns/lead-fields';
import { VARIABLE_TYPES, journeyDefinitionSchema, type VariableDescriptor } from '../../lib/journeys';
import { JOURNEY_RUN_STATUSES } from '../../lib/journeys/run-statuses';
import { ErrorCode } from '../../lib/error-codes';
import { e164PhoneSchema } from '../../lib/phone';
import { offsetQuery } from '../http/pagination';
import { defineRoute } from '../http/route';
import { cancelRun, getRun, listRuns, recoverRun, startRunByHand } from './journey-runs';
import { findOwnedJourney, listJourneys, variableCatalog, journeyView } from './journeys';

const WORKFLOWS_FEATURE = { feature: 'workflows' } as const;

const journeySchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  status: z
    .enum(['DRAFT', 'PUBLISHED'])
    .describe('DRAFT until a revision is published; PUBLISHED once one is (later saves are drafts on top of it).'),
  revision: z.number().int().describe('Bumped by every save.'),
  publishedRevision: z
    .number()
    .int()
    .nullable()
    .describe('The revision JOURNEY campaigns enroll new leads into; runs keep the revision they were enrolled into.'),
  updatedAt: z.string(),
});

const descriptorSchema: z.ZodType<VariableDescriptor> = z
  .object({
    name: z.string(),
    type: z.enum(VARIABLE_TYPES),
    description: z.string(),
    allowedValues: z.array(z.string()),
    open: z.boolean().describe("true: any path below this object may be read (e.g. a webhook's response body)."),
    get children() {
      return z.array(descriptorSchema);
    },
  })
  .meta({ id: 'VariableDescriptor' });

const catalogSchema = z.object({
  triggerInput: descriptorSchema.describe(
    'start.fields: the lead fields the start node declares (open: undeclared ones may be read too).',
  ),
  producers: z.array(z.object({ nodeId: z.string(), label: z.string(), output: descriptorSchema })),
  availabilityByNode: z
    .record(
      z.string(),
      z.array(
        z.object({
          path: z.string(),
          type: z.enum(VARIABLE_TYPES),
          optional: z.boolean().describe('Set on some paths to this node only: read it as {{path?}}.'),
        }),
      ),
    )
    .describe('Per node id: the variables it can read, from the paths of the graph.'),
  conditionOperatorsByType: z.record(z.string(), z.array(z.string())),
});

const runSchema = z.object({
  id: z.string().uuid().describe("The lead's id for a pushed lead."),
  workflowId: z.string().uuid(),
  revision: z.number().int(),
  campaignId: z.string().uuid().nullable(),
  leadId: z.string().uuid().nullable(),
  status: z.enum(JOURNEY_RUN_STATUSES),
  currentNodeId: z.string().nullable(),
  trigger: z.unknown().describe('{ phone, name, fields }: what the run started with, read as {{start.…}}.'),
  variables: z.unknown().describe("The run's variables by node id (live while it runs, final once ended)."),
  attempt: z.number().int().nullable().describe('Live: attempt at the current node (1, plus one per operator retry).'),
  nextWakeAt: z.string().nullable().describe('Live: when a waiting run wakes up by itself.'),
  awaiting: z
    .unknown()
    .describe('needs_recovery: { nodeId, kind (recovery or review), reason, errorType, allowedActions }.'),
  startedBy: z.string().describe('lead_push, or key:<keyId> for a run started by hand.'),
  temporalWorkflowId: z.string().describe("The run's workflow id in the Temporal UI."),
  createdAt: z.string(),
  updatedAt: z.string(),
  endedAt: z.string().nullable(),
  decisions: z
    .array(
      z.object({
        nodeId: z.string(),
        action: z.enum(['retry', 'skip', 'end']),
        output: z.unknown(),
        note: z.string().nullable(),
        decidedBy: z.string(),
        via: z.enum(['api', 'temporal']).or(z.string()),
        at: z.string(),
      }),
    )
    .optional(),
});

const journeyParams = z.object({ id: z.string() });
const runParams = z.object({ id: z.string(), runId: z.string() });

export const journeyRoutes = [
  defineRoute({
    method: 'get',
    path: '/workflows',
    access: { permission: 'workflows.view', requires: WORKFLOWS_FEATURE },
    summary:
      "List the workspace's workflows (unpaginated). Workflows are saved and published by the operator CLI (`workflow save`, `workflow publish`): workflows.edit is a scope a key can never hold.",
    tags: ['Workflows'],
    responses: { 200: { description: 'Every workflow of the workspace.', schema: z.array(journeySchema) } },
    handler: async ({ services, principal }) => ({
      status: 200,
      body: (await listJourneys(services.db, principal.workspaceId)).map(journeyView),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/workflows/{id}',
    access: { permission: 'workflows.view' },
    summary: 'Read one workflow (spec section 2 workflow object, plus publishedRevision).',
    tags: ['Workflows'],
    params: journeyParams,
    responses: { 200: { description: 'The workflow.', schema: journeySchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: journeyView(await findOwnedJourney(services.db, principal.workspaceId, params.id)),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/workflows/variable-catalog',
    access: { permission: 'workflows.view', requires: WORKFLOWS_FEATURE },
    summary:
      'Validate a definition and describe its variables. A body of the wrong shape: 400 invalid_body with issues. A graph that breaks a rule: 422 workflow_invalid with details, one message per problem, naming the node.',
    tags: ['Workflows'],
    body: z.object({ definition: journeyDefinitionSchema }),
    responses: { 200: { description: 'The catalog of a valid graph.', schema: catalogSchema } },
    errors: { 422: [ErrorCode.workflow_invalid] },
    handler: async ({ body }) => ({ status: 200, body: variableCatalog(body.definition) }),
  }),
  defineRoute({
    method: 'get',
    path: '/workflows/{id}/runs',
    access: { permission: 'workflows.view', requires: WORKFLOWS_FEATURE },
    summary:
      'List runs of a workflow, newest first: offset pagination (limit default 50, max 200), the total in X-Total-Count, optionally one status.',
    tags: ['Workflows'],
    params: journeyParams,
    query: z.object({ ...offsetQuery, status: z.enum(JOURNEY_RUN_STATUSES).optional() }),
    responses: {
      200: {
        description: 'A bare array of runs; X-Total-Count carries the total of the filter.',
        schema: z.array(runSchema),
        headers: ['X-Total-Count'],
      },
    },
    handler: async ({ services, principal, params, query }) => {
      const { runs, total } = await listRuns(services, principal, params.id, query);
      return { status: 200, body: runs, headers: { 'X-Total-Count': String(total) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/workflows/{id}/runs',
    access: { permission: 'workflows.run', requires: WORKFLOWS_FEATURE },
    summary:
      'Start a run by hand on the published revision, with trigger fields (read as {{start.fields.…}}). It belongs to no campaign and has no lead: a call node in it needs recovery (skip it with an output, or end the run).',
    tags: ['Workflows'],
    params: journeyParams,
    body: z.strictObject({
      fields: leadFieldsSchema.default({}),
      phone: e164PhoneSchema.optional().describe('{{start.phone}}; also the number a whatsapp node messages.'),
      name: z.string().check(atMostCodePoints(200)).optional(),
    }),
    responses: { 201: { description: 'Started.', schema: runSchema } },
    errors: { 409: [ErrorCode.workflow_not_published], 503: [ErrorCode.temporal_unavailable] },
    handler: async ({ services, principal, params, body }) => ({
      status: 201,
      body: await startRunByHand(services, principal, params.id, body),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/workflows/{id}/runs/{runId}',
    access: { permission: 'workflows.view', requires: WORKFLOWS_FEATURE },
    summary:
      'Read one run: its row, the live state from its workflow while it runs (current node, variables, attempt, next wake-up, what it waits for), and every operator decision.',
    tags: ['Workflows'],
    params: runParams,
    responses: { 200: { description: 'The run.', schema: runSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await getRun(services, principal, params.id, params.runId),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/workflows/{id}/runs/{runId}/cancel',
    access: { permission: 'workflows.run', requires: WORKFLOWS_FEATURE },
    summary:
      'Cancel a run: it ends cancelled once its current step stops (a call in progress is cancelled too). An ended run: 409 run_not_running.',
    tags: ['Workflows'],
    params: runParams,
    responses: { 202: { description: 'Cancellation requested.', schema: runSchema } },
    errors: { 409: [ErrorCode.run_not_running], 503: [ErrorCode.temporal_unavailable] },
    handler: async ({ services, principal, params }) => ({
      status: 202,
      body: await cancelRun(services, principal, params.id, params.runId),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/workflows/{id}/runs/{runId}/recover',
    access: { permission: 'workflows.recover', requires: WORKFLOWS_FEATURE },
    summary:
      'Resolve a run that needs recovery (a node failed for good) or waits at a review node: retry the node, skip it with the given output, or end the run. Recorded with who decided. A run not waiting for a decision: 409 run_not_awaiting_decision.',
    tags: ['Workflows'],
    params: runParams,
    body: z.strictObject({
      action: z
        .enum(['retry', 'skip', 'end'])
        .describe(
          'retry (recovery only): run the node again. skip: continue as if the node had produced output. end: end the run (failed; cancelled at a review node).',
        ),
      output: z
        .record(z.string(), z.unknown())
        .optional()
        .describe(
          "skip: the node's output, read by later nodes as {{<nodeId>.…}}. A review node's: { decision: approved|rejected, note }.",
        ),
      note: z.string().check(atMostCodePoints(2000)).optional(),
    }),
    responses: { 200: { description: 'The run after the decision.', schema: runSchema } },
    errors: { 409: [ErrorCode.run_not_awaiting_decision], 503: [ErrorCode.temporal_unavailable] },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: await recoverRun(services, principal, params.id, params.runId, body),
    }),
  }),
];
