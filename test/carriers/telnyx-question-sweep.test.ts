// The sweep of Telnyx questions nobody answers (api/carriers/telnyx-question-waits.ts) costs nothing while no question
// waits: it sleeps until the next wait falls due, is woken by the waits its own process arms, and otherwise looks once
// per idle poll. Counted by its claims (its one query per pass), not timed. The walk itself, through the twin and two
// sweeping APIs: test/carriers/telnyx-adapter.test.ts ("a question nobody answers").
import { afterAll, describe, expect, it } from 'vitest';
import type { AppServices } from '../../api/app-services';
import { armQuestionWait, createQuestionWaitSweep } from '../../api/carriers/telnyx-question-waits';
import { ensureTelnyxTwinConnection } from '../../lib/carriers/twin';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { createSqlPool } from '../../lib/sql-pool';
import { recordDialingCall } from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const sql = createSqlPool(url, 2);
afterAll(() => sql.end());
const owner = await createTestWorkspace(db);
const keyring = keyringSchema.parse(newKeyringEntry('k1'));
const connection = await ensureTelnyxTwinConnection(db, keyring, owner.workspaceId, 'http://127.0.0.1:9/v2');
const ANSWER_TIMEOUT_MS = 300;
/**
 * What the sweep reads of an API process's services: its database and the answer timeout. No keyring: a wait it claims
 * is released unwalked (the walk through a connection is telnyx-adapter.test.ts's).
 */
const services = { db, sql, telnyxAnswerTimeoutMs: ANSWER_TIMEOUT_MS } as unknown as AppServices;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A sweep started on the services, stopped after the file. */
function startedSweep(options: { idlePollMs?: number } = {}) {
  const sweep = createQuestionWaitSweep(services, options);
  sweep.start();
  afterAll(() => sweep.stop());
  return sweep;
}

describe('the question sweep while no question waits', () => {
  it('claims once at its start, then sleeps until its idle poll (5 s): no query meanwhile', async () => {
    const sweep = startedSweep();
    await until(
      async () => sweep.claims,
      (claims) => claims > 0,
    );
    await sleep(3_000);
    expect(sweep.claims).toBe(1);
    await sweep.stop();
  });

  it('is woken by a wait its process arms, claims it once due, and sleeps again', async () => {
    // An idle poll longer than the test: only the arming can wake it.
    const sweep = startedSweep({ idlePollMs: 600_000 });
    await until(
      async () => sweep.claims,
      (claims) => claims > 0,
    );
    const call = await recordDialingCall(
      db,
      { owner, connection, caller: '+14155579300' },
      { provider: 'telnyx-twin', providerCallId: null },
    );
    expect(await armQuestionWait(services, call.id, 1)).toBe(true);
    const released = await until(
      () => db.callQuestionWait.findUniqueOrThrow({ where: { callId: call.id } }),
      (wait) => wait.dueAt === null,
    );
    expect(released.step).toBe(1);
    // The pass at its start, then the one the wait woke (a timer firing a hair before the database's due time may
    // look once more); none while nothing waits.
    const claimsOnceWalked = sweep.claims;
    expect(claimsOnceWalked).toBeGreaterThanOrEqual(2);
    expect(claimsOnceWalked).toBeLessThanOrEqual(3);
    await sleep(2 * ANSWER_TIMEOUT_MS);
    expect(sweep.claims).toBe(claimsOnceWalked);
    await sweep.stop();
  });
});
