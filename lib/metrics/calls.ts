import { Counter, register } from 'prom-client';

/**
 * Calls placed, counted once each when its outcome is recorded (endCall), by outcome. The process that
 * records the end counts it: the API for a carrier's terminal event, a worker for a reconciled or failed
 * dial. Sum it over both jobs (docs/operations.md#metrics).
 */
export const callsPlaced = new Counter({
  name: 'workspace_calls_placed_total',
  help: 'Calls placed, counted when their outcome is recorded, by outcome.',
  labelNames: ['outcome'] as const,
  registers: [register],
});
