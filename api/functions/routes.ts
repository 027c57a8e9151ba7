import { z } from 'zod';
import { FUNCTION_LIMITS, FUNCTION_METHODS } from '../../lib/functions/function-definition';
import { defineRoute } from '../http/route';
import { deleteFunction, listFunctions } from './functions';

const { timeoutMs } = FUNCTION_LIMITS;

const functionSchema = z.object({
  id: z.string().uuid(),
  name: z.string().describe("The tool name the model is offered (unique among the workspace's functions)."),
  description: z.string().describe('What the model is told the function does.'),
  parameters: z
    .record(z.string(), z.unknown())
    .describe(
      `JSON Schema (type object) of the arguments the model chooses; at most ${FUNCTION_LIMITS.parametersBytes} bytes, ${FUNCTION_LIMITS.parametersDepth} levels deep.`,
    ),
  presets: z
    .record(z.string(), z.string())
    .describe(
      'Arguments rendered from the call ({{call.id}}, {{lead.phone}}, {{lead.fields.x}}, ...), sent as `presets`: the model never sets nor sees them.',
    ),
  url: z.string(),
  method: z.enum(FUNCTION_METHODS),
  timeoutMs: z
    .number()
    .int()
    .describe(
      `How long the request may take, ${timeoutMs.min}-${timeoutMs.max} ms (default ${timeoutMs.default}); past it the model is told the outcome is unknown.`,
    ),
  fillerLine: z.string().nullable().describe('Said while the request runs; null: nothing.'),
  slowLine: z.string().nullable().describe('Said if the request is slow; null: nothing.'),
  agents: z
    .array(
      z.object({
        id: z.string().uuid(),
        afterQuestion: z
          .number()
          .int()
          .nullable()
          .describe(
            "The script engine calls the function once the lead has answered this question of the agent's script; null: only a model calls it.",
          ),
      }),
    )
    .describe('The agents whose conversations are offered the function.'),
  createdAt: z.string(),
});

export const functionRoutes = [
  defineRoute({
    method: 'get',
    path: '/functions',
    access: { permission: 'functions.view' },
    summary:
      "List the workspace's custom functions (webhook tools bound to agents; unpaginated, newest first). " +
      'Functions are made and bound by the operator CLI (`function create`, `function bind`): functions.edit is a scope a key can never hold.',
    tags: ['Custom functions'],
    responses: { 200: { description: 'Every live function of the workspace.', schema: z.array(functionSchema) } },
    handler: async ({ services, principal }) => ({ status: 200, body: await listFunctions(services, principal) }),
  }),
  defineRoute({
    method: 'delete',
    path: '/functions/{id}',
    access: { permission: 'functions.delete' },
    summary:
      'Delete a function: unbound from every agent and offered to no conversation from its next turn; calls keep their record of it. ' +
      "An unknown id and another workspace's function both answer 403 forbidden.",
    tags: ['Custom functions'],
    params: z.object({ id: z.string() }),
    responses: { 204: { description: 'Deleted.' } },
    handler: async ({ services, principal, params }) => {
      await deleteFunction(services, principal, params.id);
      return { status: 204 };
    },
  }),
];
