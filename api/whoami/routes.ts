import { z } from 'zod';
import { defineRoute } from '../http/route';

export const whoamiSchema = z.object({
  keyId: z.string().uuid(),
  workspaceId: z.string().uuid(),
  memberId: z.string().uuid(),
  scoped: z.boolean(),
  permissions: z
    .array(z.string())
    .describe(
      "The key's effective permissions: its scopes with what they include, intersected with its member's current role.",
    ),
});

export const whoamiRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/whoami',
    access: { permission: null },
    summary: 'The calling key: its workspace, the member it acts for and its effective permissions.',
    tags: ['Keys'],
    responses: { 200: { description: 'The key behind this request.', schema: whoamiSchema } },
    handler: async ({ principal }) => ({
      status: 200,
      body: {
        keyId: principal.keyId,
        workspaceId: principal.workspaceId,
        memberId: principal.memberId,
        scoped: principal.scoped,
        permissions: [...principal.permissions].sort(),
      },
    }),
  }),
];
