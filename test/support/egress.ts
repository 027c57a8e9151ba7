import { parseEgressSettings } from '../../lib/config';
import { createEgress } from '../../lib/http/egress';

/**
 * The egress guard with the test stack's allowances (vitest.config.ts: http:// and loopback), for activities built
 * outside the worker process; the processes the tests start read the same variables.
 */
export function testEgress() {
  return createEgress(parseEgressSettings(process.env));
}
