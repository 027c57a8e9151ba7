import { randomUUID } from 'node:crypto';
import { ApplicationFailure, type RetryPolicy } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  CreditWorkspaceNotFoundError,
  HoldNotFoundError,
  InsufficientCreditsError,
} from '../lib/credits/credit-errors';
import { billSpeechCall } from '../activities/speech/speech-analysis';
import { resolveAmbiguousSend } from '../activities/whatsapp/whatsapp-messages';
import { rowNotFound } from '../lib/temporal/refusal';
import * as policies from '../lib/temporal/retry-policies';
import { useTestDatabase } from './support/database';
import { createTestWorkspace } from './support/workspace';

const { db } = await useTestDatabase();

// Issue 40: an activity over tenant data must not retry a failure no retry can change (docs/cpu-budget.md#retry-policies-over-tenant-data).
// Temporal matches nonRetryableErrorTypes against an ApplicationFailure's type; an error thrown as it is becomes one
// typed by its class name (ensureApplicationFailure, as the worker reports an activity's error), so the names listed must be the classes' own.
const named = Object.entries(policies).filter(
  (entry): entry is [string, RetryPolicy] => typeof entry[1] === 'object' && !Array.isArray(entry[1]),
);

describe('retry policies over tenant data', () => {
  it('name the ledger refusals, RangeError and not_found by the types Temporal gives them', () => {
    const thrown = [
      new HoldNotFoundError('workspace', 'key'),
      new CreditWorkspaceNotFoundError('workspace'),
      new InsufficientCreditsError('workspace', '0', '1'),
      new RangeError('out of range'),
    ];
    for (const error of thrown) expect(policies.tenantDataRefusals).toContain(ApplicationFailure.fromError(error).type);
    const gone = rowNotFound('campaign 1');
    expect(gone.nonRetryable).toBe(true);
    expect(policies.tenantDataRefusals).toContain(gone.type);
  });

  it('every policy retried without a maximum stops at once on them; a database failure is not among them', () => {
    const unbounded = named.filter(([, policy]) => policy.maximumAttempts === undefined);
    expect(unbounded.map(([name]) => name)).toContain('untilDatabaseAnswers');
    for (const [name, policy] of unbounded)
      expect(policy.nonRetryableErrorTypes, name).toEqual(expect.arrayContaining([...policies.tenantDataRefusals]));
    for (const [name, policy] of named)
      expect(policy.nonRetryableErrorTypes ?? [], name).not.toContain('PrismaClientKnownRequestError');
  });

  it('an activity on untilDatabaseAnswers over a row that is gone fails for good; a database failure is retried', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const stops = (error: unknown) => {
      const failure = ApplicationFailure.fromError(error);
      return failure.nonRetryable || policies.untilDatabaseAnswers.nonRetryableErrorTypes!.includes(failure.type!);
    };
    // A WhatsApp message deleted meanwhile (its findUniqueOrThrow was retried for ever).
    const gone = await resolveAmbiguousSend({ db }, { messageId: randomUUID() }).catch((error: unknown) => error);
    expect(gone).toMatchObject({ type: 'not_found', nonRetryable: true });
    // An analysis whose hold the ledger does not have: nothing to settle, done (settleHold), never retried.
    await expect(billSpeechCall({ db }, { speechCallId: randomUUID(), workspaceId })).resolves.toBeUndefined();
    expect(stops(gone)).toBe(true);
    // A ledger refusal thrown as it is stops by the policy's list.
    expect(stops(new HoldNotFoundError(workspaceId, 'key'))).toBe(true);
    expect(stops(new Error('connection terminated'))).toBe(false);
  });
});
