import type { AppServices } from '../app-services';

/** The commerce API's SQL (docs/features/commerce.md): orders, and the order notification rules of a connection. */

type Db = AppServices['db'];

/** A page of the workspace's orders (attributed or not, when given), newest placed first, with the total. */
export async function ordersOfWorkspacePage(
  db: Db,
  workspaceId: string,
  query: { page: number; limit: number; attributed?: boolean },
) {
  const where = {
    workspaceId,
    ...(query.attributed === undefined ? {} : { attributedToService: query.attributed }),
  };
  const [rows, total] = await Promise.all([
    db.commerceOrder.findMany({
      where,
      orderBy: [{ placedAt: 'desc' }, { id: 'desc' }],
      skip: (query.page - 1) * query.limit,
      take: query.limit,
    }),
    db.commerceOrder.count({ where }),
  ]);
  return { rows, total };
}

/** The connection's rules in order, and how many of its orders were placed since `since`. */
export async function rulesAndOrderVolume(db: Db, connectionId: string, since: Date) {
  const [rules, recentOrderVolume] = await Promise.all([
    db.orderNotificationRule.findMany({ where: { connectionId }, orderBy: { position: 'asc' } }),
    db.commerceOrder.count({
      where: { connectionId, placedAt: { gte: since } },
    }),
  ]);
  return { rules, recentOrderVolume };
}

/** These templates' status and category, whatever their workspace (the rules' own, read back). */
export async function templateStatuses(db: Db, ids: readonly string[]) {
  return db.whatsAppTemplate.findMany({
    where: { id: { in: [...ids] } },
    select: { id: true, status: true, category: true },
  });
}

/** Which of these templates the workspace holds, with their variable counts. */
export async function templateVariableCounts(db: Db, workspaceId: string, ids: readonly string[]) {
  return db.whatsAppTemplate.findMany({
    where: { workspaceId, id: { in: [...ids] } },
    select: { id: true, variableCount: true },
  });
}

/** The connection's rules replaced whole, in this order, under its row's lock (concurrent replacements take turns). */
export async function replaceRulesOfConnection(
  db: Db,
  connectionId: string,
  rules: ReadonlyArray<{ templateId: string; presetId: string; enabled: boolean; delayMinutes: number }>,
): Promise<void> {
  await db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM "CrmConnection" WHERE id = ${connectionId}::uuid FOR UPDATE`;
    await tx.orderNotificationRule.deleteMany({ where: { connectionId } });
    await tx.orderNotificationRule.createMany({
      data: rules.map((rule, position) => ({
        connectionId,
        position,
        trigger: 'ORDER_PLACED',
        ...rule,
      })),
    });
  });
}
