import { forbidden } from '../../lib/refusal';
import type { Principal } from '../door/principal';
import { isUuid } from '../../lib/uuid';

/**
 * One row of the caller's workspace by id, read by `find` with the workspace in its WHERE clause: an id
 * that is not a UUID, an unknown id and another workspace's row all get the same 403 forbidden, so
 * neither the body nor the timing tells them apart (as campaigns do, docs/api-decisions.md).
 */
export async function findOwned<Row>(
  principal: Principal,
  id: string,
  find: (where: { id: string; workspaceId: string }) => Promise<Row | null | undefined>,
): Promise<Row> {
  const row = isUuid(id) ? await find({ id, workspaceId: principal.workspaceId }) : undefined;
  if (!row) throw forbidden();
  return row;
}
