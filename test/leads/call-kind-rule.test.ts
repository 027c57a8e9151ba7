import { describe, expect, it } from 'vitest';
import { insertAnsweredCall } from '../support/calls';
import { useTestDatabase } from '../support/database';
import { createTestWorkspace } from '../support/workspace';

const { db } = await useTestDatabase();
const owner = await createTestWorkspace(db);

describe('the rule of a call kind (trigger call_kind_rule)', () => {
  it("keeps a campaign's call with its campaign and lead, and a test call with neither and its number", async () => {
    const call = await insertAnsweredCall(db, owner);
    // A campaign's call cannot lose its lead or campaign.
    await expect(db.call.update({ where: { id: call.id }, data: { leadId: null } })).rejects.toThrow(
      /rule of its kind/,
    );
    await expect(db.call.update({ where: { id: call.id }, data: { kind: 'test' } })).rejects.toThrow(
      /rule of its kind/,
    );
    // A test call: no campaign, no lead, a number.
    const test = await db.call.create({
      data: {
        workspaceId: owner.workspaceId,
        kind: 'test',
        toNumber: '+14155550100',
        attempt: 1,
        attemptId: `test:${call.id}`,
        provider: 'simulated',
        status: 'dialing',
        startedAt: new Date(),
      },
    });
    expect(test.kind).toBe('test');
    await expect(db.call.update({ where: { id: test.id }, data: { toNumber: null } })).rejects.toThrow(
      /rule of its kind/,
    );
    await expect(db.call.update({ where: { id: test.id }, data: { campaignId: call.campaignId } })).rejects.toThrow(
      /rule of its kind/,
    );
    // Nothing moved.
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({
      kind: 'campaign',
      leadId: call.leadId,
    });
  });

  it('keeps an inbound call from an unknown number with neither campaign nor lead, inbound, and its caller', async () => {
    const inbound = await db.call.create({
      data: {
        workspaceId: owner.workspaceId,
        kind: 'inbound',
        direction: 'inbound',
        fromNumber: '+14155550111',
        toNumber: '+14155550100',
        attempt: 1,
        attemptId: 'inbound:CA0123',
        provider: 'simulated',
        status: 'dialing',
        startedAt: new Date(),
      },
    });
    await expect(db.call.update({ where: { id: inbound.id }, data: { fromNumber: null } })).rejects.toThrow(
      /rule of its kind/,
    );
    await expect(db.call.update({ where: { id: inbound.id }, data: { direction: 'outbound' } })).rejects.toThrow(
      /rule of its kind/,
    );
    const campaignCall = await insertAnsweredCall(db, owner);
    await expect(db.call.update({ where: { id: inbound.id }, data: { leadId: campaignCall.leadId } })).rejects.toThrow(
      /rule of its kind/,
    );
  });
});
