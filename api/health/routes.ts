import { z } from 'zod';
import { defineRoute } from '../http/route';
import { checkHealth } from './health';

const dependencyState = z.enum(['up', 'down']);
export const healthReportSchema = z.object({
  status: z.enum(['ok', 'unavailable']),
  database: dependencyState,
  temporal: dependencyState,
});

export const healthRoutes = [
  defineRoute({
    method: 'get',
    path: '/health',
    access: { public: true },
    summary: 'Reports PostgreSQL and Temporal connectivity; 503 when either is down.',
    tags: ['Operations'],
    responses: {
      200: { description: 'Both dependencies are up.', schema: healthReportSchema },
      503: { description: 'A dependency is down.', schema: healthReportSchema },
    },
    handler: async ({ services }) => {
      const report = await checkHealth(services);
      return { status: report.status === 'ok' ? 200 : 503, body: report };
    },
  }),
];
