import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ABANDONED_HOLDS_SQL, settleAbandonedHolds, WHATSAPP_DELIVERY_TTL_MS } from '../../lib/credits/abandoned-holds';
import { HoldAlreadySettledError, InsufficientCreditsError } from '../../lib/credits/credit-errors';
import { debit } from '../../lib/credits/debit';
import { hold, postHold, voidHold } from '../../lib/credits/holds';
import { prismaCreditStore, type CreditActor } from '../../lib/credits/ledger-store';
import { creditUnits } from '../../lib/credits/money';
import { startedMinutes, testCallPriceUnits } from '../../lib/credits/price-table';
import { grantCredits } from '../../lib/door/workspace-admin';
import { insertAgent } from '../support/agents';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const store = prismaCreditStore(db);
const actor: CreditActor = { type: 'system', id: 'credits-test' };

/** The balance and the sum of the ledger's amounts, as decimal strings with 4 places. */
async function balanceAndLedgerSum(workspaceId: string) {
  const [row] = await db.$queryRaw<Array<{ balance: string; sum: string }>>`
    SELECT w."creditBalance"::text AS balance,
      (SELECT COALESCE(sum(amount), 0)::numeric(14, 4)::text FROM "CreditLedgerEntry" e WHERE e."workspaceId" = w.id) AS sum
    FROM "Workspace" w WHERE w.id = ${workspaceId}::uuid`;
  return row!;
}

const entriesOf = (workspaceId: string) =>
  db.creditLedgerEntry.findMany({ where: { workspaceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });

const analysis = (workspaceId: string, idempotencyKey: string = randomUUID()) =>
  debit(store, {
    workspaceId,
    kind: 'recording_analysis',
    amount: '0.5000',
    reference: { type: 'speech_analysis', id: randomUUID() },
    actor,
    idempotencyKey,
  });

describe('debits', () => {
  it('50 concurrent debits against a balance that covers 10: exactly 10 succeed, never below zero, the ledger sums to the balance', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    await grantCredits(db, workspaceId, 5); // ten analyses of 0.5
    const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => analysis(workspaceId)));
    const succeeded = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const refused = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    expect(succeeded).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const reason of refused) {
      expect(reason).toBeInstanceOf(InsufficientCreditsError);
      expect((reason as InsufficientCreditsError).required).toBe('0.5000');
      expect(creditUnits((reason as InsufficientCreditsError).balance)).toBeLessThan(creditUnits('0.5000'));
    }
    expect(await balanceAndLedgerSum(workspaceId)).toEqual({ balance: '0.0000', sum: '0.0000' });
    const charges = (await entriesOf(workspaceId)).filter((entry) => entry.kind === 'recording_analysis');
    expect(charges).toHaveLength(10);
    // Each charge saw its own balance: 4.5, 4.0, ... 0, each once.
    expect(charges.map((entry) => Number(entry.balanceAfter)).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 10 }, (_, index) => index * 0.5),
    );
    expect(charges.every((entry) => entry.status === 'posted' && Number(entry.amount) === -0.5)).toBe(true);
  });

  it('refuses a debit the balance does not cover with balance and required, writing nothing', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    await grantCredits(db, workspaceId, 0.25);
    const refusal = await analysis(workspaceId).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(InsufficientCreditsError);
    expect(refusal).toMatchObject({ balance: '0.2500', required: '0.5000' });
    expect(await entriesOf(workspaceId)).toHaveLength(1); // the grant only
    expect(await balanceAndLedgerSum(workspaceId)).toEqual({ balance: '0.2500', sum: '0.2500' });
  });

  it('charges a debit retried with its key once, sequentially and concurrently', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    await grantCredits(db, workspaceId, 10);
    const first = await analysis(workspaceId, 'analysis-1');
    const again = await analysis(workspaceId, 'analysis-1');
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ entry: first.entry, duplicate: true });
    const concurrent = await Promise.all(Array.from({ length: 10 }, () => analysis(workspaceId, 'analysis-2')));
    expect(concurrent.filter((applied) => !applied.duplicate)).toHaveLength(1);
    expect(new Set(concurrent.map((applied) => applied.entry.id)).size).toBe(1);
    expect(await balanceAndLedgerSum(workspaceId)).toEqual({ balance: '9.0000', sum: '9.0000' });
    // Another workspace's identical key is its own.
    const other = await createTestWorkspace(db);
    await grantCredits(db, other.workspaceId, 1);
    expect((await analysis(other.workspaceId, 'analysis-1')).duplicate).toBe(false);
  });
});

describe('holds', () => {
  const holdFor = (workspaceId: string, idempotencyKey: string, amount: string, upTo?: string) =>
    hold(store, {
      workspaceId,
      heldFor: 'test_call',
      amount,
      upTo,
      reference: { type: 'call', id: randomUUID() },
      actor,
      idempotencyKey,
    });

  it('posted: the held amount reserved, then the final amount charged and the rest released', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    await grantCredits(db, workspaceId, 2);
    const held = await holdFor(workspaceId, 'h1', '1.0000');
    expect(held.entry).toMatchObject({ kind: 'hold', status: 'pending', amount: '-1.0000', balanceAfter: '1.0000' });
    expect((await holdFor(workspaceId, 'h1', '1.0000')).duplicate).toBe(true);
    expect((await balanceAndLedgerSum(workspaceId)).balance).toBe('1.0000');
    const posted = await postHold(store, { workspaceId, idempotencyKey: 'h1', amount: '0.3000', actor });
    expect(posted.hold).toMatchObject({ status: 'posted', amount: '-1.0000' });
    expect(posted.release).toMatchObject({ kind: 'hold_release', amount: '1.0000', holdId: held.entry.id });
    expect(posted.charge).toMatchObject({ kind: 'test_call', amount: '-0.3000', holdId: held.entry.id });
    expect(await balanceAndLedgerSum(workspaceId)).toEqual({ balance: '1.7000', sum: '1.7000' });
    // Posting again answers the same settlement; voiding a posted hold is refused.
    const again = await postHold(store, { workspaceId, idempotencyKey: 'h1', amount: '0.3000', actor });
    expect(again.duplicate).toBe(true);
    expect(again.charge!.id).toBe(posted.charge!.id);
    await expect(voidHold(store, { workspaceId, idempotencyKey: 'h1', actor })).rejects.toBeInstanceOf(
      HoldAlreadySettledError,
    );
    expect(await balanceAndLedgerSum(workspaceId)).toEqual({ balance: '1.7000', sum: '1.7000' });
  });

  it('voided: everything held goes back; a final amount above the hold is refused', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    await grantCredits(db, workspaceId, 2);
    await holdFor(workspaceId, 'h2', '1.5000');
    await expect(
      postHold(store, { workspaceId, idempotencyKey: 'h2', amount: '1.6000', actor }),
    ).rejects.toBeInstanceOf(RangeError);
    const voided = await voidHold(store, { workspaceId, idempotencyKey: 'h2', actor });
    expect(voided.hold.status).toBe('voided');
    expect(voided.charge).toBeNull();
    expect((await voidHold(store, { workspaceId, idempotencyKey: 'h2', actor })).duplicate).toBe(true);
    await expect(
      postHold(store, { workspaceId, idempotencyKey: 'h2', amount: '0.1000', actor }),
    ).rejects.toBeInstanceOf(HoldAlreadySettledError);
    expect(await balanceAndLedgerSum(workspaceId)).toEqual({ balance: '2.0000', sum: '2.0000' });
    // Sorted: entries written in the same millisecond (createdAt) list in id order, not in the order written.
    expect(
      (await entriesOf(workspaceId))
        .map((entry) => [entry.kind, entry.status])
        .sort((a, b) => a[0]!.localeCompare(b[0]!)),
    ).toEqual([
      ['grant', 'posted'],
      ['hold', 'voided'],
      ['hold_release', 'posted'],
    ]);
  });

  it('reserves up to what the balance allows, in whole steps, and refuses below one step', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    await grantCredits(db, workspaceId, 0.75);
    expect((await holdFor(workspaceId, 'h3', '0.1000', '3.0000')).entry.amount).toBe('-0.7000');
    await expect(holdFor(workspaceId, 'h4', '0.1000', '3.0000')).rejects.toBeInstanceOf(InsufficientCreditsError);
    expect(await balanceAndLedgerSum(workspaceId)).toEqual({ balance: '0.0500', sum: '0.0500' });
  });

  it('keeps the ledger append-only: no amount changed, no entry deleted, a hold settled once', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    await grantCredits(db, workspaceId, 1);
    const [grant] = await entriesOf(workspaceId);
    await expect(
      db.$executeRaw`UPDATE "CreditLedgerEntry" SET amount = 100 WHERE id = ${grant!.id}::uuid`,
    ).rejects.toThrow(/append-only/);
    await expect(db.$executeRaw`DELETE FROM "CreditLedgerEntry" WHERE id = ${grant!.id}::uuid`).rejects.toThrow(
      /append-only/,
    );
    const held = await holdFor(workspaceId, 'h5', '0.5000');
    await voidHold(store, { workspaceId, idempotencyKey: 'h5', actor });
    await expect(
      db.$executeRaw`UPDATE "CreditLedgerEntry" SET status = 'posted' WHERE id = ${held.entry.id}::uuid`,
    ).rejects.toThrow(/append-only/);
  });
});

describe('test call prices', () => {
  it('charges started minutes', () => {
    expect([null, 0, 1, 60_000, 60_001, 125_000].map(startedMinutes)).toEqual([0, 0, 1, 1, 2, 3]);
    expect(testCallPriceUnits(61_000)).toBe(creditUnits('0.2000'));
  });
});

// The ledger the API lists: six grants, a charge and a pending hold, in a workspace of its own.
const viewer = await createTestWorkspace(db, { scopes: ['billing.view'] });
const outsider = await createTestWorkspace(db, { scopes: ['calls.view'] });
for (let grant = 1; grant <= 6; grant++) await grantCredits(db, viewer.workspaceId, grant);
await analysis(viewer.workspaceId, 'listed-analysis');
await hold(store, {
  workspaceId: viewer.workspaceId,
  heldFor: 'test_call',
  amount: '2.0000',
  reference: null,
  actor,
  idempotencyKey: 'listed-hold',
});
const ledger = async (query: string, key = viewer.key) => {
  const response = await api.request('GET', `/credits/ledger${query}`, { key });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};

describe('GET /credits/balance and GET /credits/ledger', () => {
  it('answers the balance and what pending holds reserve, as decimal strings', async () => {
    const response = await api.request('GET', '/credits/balance', { key: viewer.key });
    expect(response.status).toBe(200);
    // 21 granted, 0.5 charged, 2 held.
    expect(await response.json()).toEqual({ balance: '18.5000', pendingHolds: '2.0000' });
  });

  it('pages newest first by cursor with totalCount, nextCursor null on the last page', async () => {
    const all = await db.creditLedgerEntry.findMany({
      where: { workspaceId: viewer.workspaceId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    expect(all).toHaveLength(8);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await ledger(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.totalCount).toBe(8);
      seen.push(...page.body.items.map((item: { id: string }) => item.id));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(all.map((entry) => entry.id));
    const first = await ledger('');
    expect(first.body.items).toHaveLength(8);
    expect(first.body.nextCursor).toBeNull();
    expect(first.body.items.find((item: { kind: string }) => item.kind === 'hold')).toMatchObject({
      kind: 'hold',
      status: 'pending',
      amount: '-2.0000',
      balanceAfter: '18.5000',
      heldFor: 'test_call',
      actor: 'system',
      actorId: 'credits-test',
      idempotencyKey: 'listed-hold',
    });
  });

  it('filters by kind and by time, totalCount counting the filtered entries', async () => {
    const grants = await ledger('?kind=grant&limit=2');
    expect(grants.body.totalCount).toBe(6);
    expect(grants.body.items.every((item: { kind: string }) => item.kind === 'grant')).toBe(true);
    const newestGrants = await db.creditLedgerEntry.findMany({
      where: { workspaceId: viewer.workspaceId, kind: 'grant' },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: 2,
    });
    expect(grants.body.items.map((item: { id: string }) => item.id)).toEqual(newestGrants.map((entry) => entry.id));
    const charges = await ledger('?kind=recording_analysis');
    expect(charges.body).toMatchObject({ totalCount: 1, nextCursor: null });
    expect(charges.body.items[0]).toMatchObject({ amount: '-0.5000', referenceType: 'speech_analysis' });
    const all = await db.creditLedgerEntry.findMany({
      where: { workspaceId: viewer.workspaceId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    const from = all[6]!.createdAt.toISOString();
    const since = await ledger(`?from=${from}`);
    expect(since.body.totalCount).toBe(all.filter((entry) => entry.createdAt >= all[6]!.createdAt).length);
    const before = await ledger(`?to=${from}`);
    expect(before.body.totalCount + since.body.totalCount).toBe(8);
    expect((await ledger('?from=2999-01-01T00:00:00Z')).body).toEqual({ items: [], nextCursor: null, totalCount: 0 });
  });

  it('refuses a cursor it did not hand out, a limit over 200, an unknown kind, to before from and an instant without seconds with 400', async () => {
    for (const query of [
      '?cursor=not-a-cursor',
      `?cursor=${Buffer.from('["x","y"]').toString('base64url')}`,
      '?limit=201',
      '?limit=0',
      '?kind=gift',
      '?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z',
      // RFC 3339's date-time, which the OpenAPI description names, has its seconds (the fuzzer sent this one).
      '?from=0020-02-29T00%3A00Z',
      '?to=2026-01-01T00:00%2B01:00',
    ]) {
      const answer = await ledger(query);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error, query).toBe('invalid_body');
    }
    const withSeconds = await ledger('?from=0020-02-29T00%3A00%3A00Z&to=2026-01-01T00:00:00.5%2B01:00');
    expect(withSeconds.status).toBe(200);
  });

  it('refuses a key without billing.view with 403, on both endpoints', async () => {
    for (const path of ['/credits/ledger', '/credits/balance']) {
      const response = await api.request('GET', path, { key: outsider.key });
      expect(response.status, path).toBe(403);
      expect(await response.json()).toMatchObject({ error: 'forbidden', requiredPermission: 'billing.view' });
    }
  });

  it('shows a workspace its own ledger only', async () => {
    const other = await createTestWorkspace(db, { scopes: ['billing.view'] });
    expect((await ledger('', other.key)).body).toEqual({ items: [], nextCursor: null, totalCount: 0 });
  });
});

describe('the sweep of abandoned holds', () => {
  it("reads its page from indexes, never a whole table, and no WhatsApp hold inside the platform's 30 days", async () => {
    const plan = await db.$transaction(async (tx) => {
      // Sequential scans made the last resort: a plan that still reads a table whole has no index to use.
      await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
      const rows = await tx.$queryRawUnsafe<Array<{ 'QUERY PLAN': string }>>(
        `EXPLAIN ${ABANDONED_HOLDS_SQL}`,
        new Date().toISOString(),
        500,
        new Date(Date.now() - WHATSAPP_DELIVERY_TTL_MS).toISOString(),
      );
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).not.toContain('Seq Scan');
    // Every hold but a WhatsApp message's from the partial index that holds only those; WhatsApp's from the oldest.
    expect(plan).toContain('CreditLedgerEntry_abandoned_idx');
    expect(plan).toContain('CreditLedgerEntry_status_createdAt_idx');
  });

  it('settles pending holds older than asked by what became of their operation, and only those', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    await grantCredits(db, workspaceId, 10);
    const agent = await insertAgent(db, workspaceId);
    const testCall = async (ended: { durationMs: number } | null) => {
      const callId = randomUUID();
      await db.call.create({
        data: {
          id: callId,
          workspaceId,
          kind: 'test',
          toNumber: '+14155550120',
          attempt: 1,
          attemptId: `test:${callId}`,
          provider: 'simulated',
          status: ended ? 'ended' : 'dialing',
          ...(ended && { outcome: 'answered', durationMs: ended.durationMs, endedAt: new Date() }),
          startedAt: new Date(),
          agentId: agent.id,
        },
      });
      await hold(store, {
        workspaceId,
        heldFor: 'test_call',
        amount: '1.0000',
        reference: { type: 'call', id: callId },
        actor,
        idempotencyKey: `test_call:${callId}`,
      });
      return callId;
    };
    const talked = await testCall({ durationMs: 61_000 }); // ended, its workflow died before billing: 2 minutes
    const lost = await testCall(null); // never ended
    await hold(store, {
      workspaceId,
      heldFor: 'recording_analysis',
      amount: '0.5000',
      reference: { type: 'speech_analysis', id: randomUUID() },
      actor,
      idempotencyKey: 'analysis-hold',
    });
    // Holds taken after the cutoff are left alone.
    await settleAbandonedHolds(store, new Date(Date.now() - 60_000));
    expect((await entriesOf(workspaceId)).filter((entry) => entry.status === 'pending')).toHaveLength(3);
    const cutoff = new Date(Date.now() + 1_000);
    const settled = await settleAbandonedHolds(store, cutoff);
    expect(settled.posted).toBeGreaterThanOrEqual(1);
    expect(settled.voided).toBeGreaterThanOrEqual(2);
    const entries = await entriesOf(workspaceId);
    const holds = entries.filter((entry) => entry.kind === 'hold');
    expect(holds.every((entry) => entry.status !== 'pending')).toBe(true);
    expect(holds.find((entry) => entry.referenceId === talked)!.status).toBe('posted');
    expect(holds.find((entry) => entry.referenceId === lost)!.status).toBe('voided');
    expect(entries.filter((entry) => entry.kind === 'test_call').map((entry) => entry.amount.toFixed(4))).toEqual([
      '-0.2000',
    ]);
    expect(entries.find((entry) => entry.kind === 'test_call')!.actorId).toBe('hold-sweep');
    expect(await balanceAndLedgerSum(workspaceId)).toEqual({ balance: '9.8000', sum: '9.8000' });
    // Nothing is left for a second sweep.
    const second = await settleAbandonedHolds(store, cutoff);
    expect(second).toEqual({ posted: 0, voided: 0 });
  });
});
