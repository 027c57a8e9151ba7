import { ZodError } from 'zod';
import type { PhoneNumber } from '../../generated/prisma/client';
import { isInboundReady, type InboundAgent } from '../../lib/agents/inbound-readiness';
import { storedCapabilities } from '../../lib/phone-numbers/phone-numbers';
import { pointNumberAtProduct } from '../../lib/phone-numbers/inbound-routing';
import type { Principal } from '../door/principal';
import { isUuid } from '../../lib/uuid';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { agentsOfWorkspace, phoneNumbersOfWorkspace, phoneNumberWhere, routeNumberToAgent } from './phone-number-store';

type RoutedAgent = InboundAgent & { id: string; name: string };

/** The agents numbers route to, read now: renaming or deleting an agent shows on its numbers at once. */
async function agentsById({ db }: AppServices, principal: Principal, ids: readonly (string | null)[]) {
  // A uuid column: an id that is not a UUID names no agent (and must not reach the query).
  const wanted = [...new Set(ids.filter((id): id is string => id !== null && isUuid(id)))];
  const agents: RoutedAgent[] = wanted.length ? await agentsOfWorkspace(db, principal.workspaceId, wanted) : [];
  return new Map(agents.map((agent) => [agent.id, agent]));
}

/** The carrier confirmed the number's calls come to the product, through the connection it is bound to now. */
const isRoutedToProduct = (number: PhoneNumber) =>
  number.inboundRoutedConnectionId !== null && number.inboundRoutedConnectionId === number.carrierConnectionId;

export function phoneNumberView(number: PhoneNumber, agent: RoutedAgent | undefined) {
  const capabilities = storedCapabilities(number.capabilities);
  return {
    id: number.id,
    e164: number.e164,
    country: number.country,
    region: number.region,
    capabilities,
    assignedAt: number.assignedAt.toISOString(),
    inboundAgentId: number.inboundAgentId,
    inboundAgentName: agent?.name ?? null,
    inboundReady: isInboundReady(capabilities, agent, isRoutedToProduct(number)),
  };
}

export async function listPhoneNumbers(services: AppServices, principal: Principal) {
  const numbers = await phoneNumbersOfWorkspace(services.db, principal.workspaceId);
  const agents = await agentsById(
    services,
    principal,
    numbers.map((number) => number.inboundAgentId),
  );
  return numbers.map((number) => phoneNumberView(number, agents.get(number.inboundAgentId ?? '')));
}

/**
 * Routes inbound calls of a number of the caller's workspace to one of its agents (null: to none). An
 * unknown id, another workspace's agent and a deleted agent are refused alike, and nothing changes. The
 * agent is held against DELETE /agents/{id} until the routing is written (lib/agents/agent-lock.ts).
 */
export async function routeInboundCalls(
  services: AppServices,
  principal: Principal,
  id: string,
  inboundAgentId: string | null,
) {
  const number = await findOwned(principal, id, (where) => phoneNumberWhere(services.db, where));
  const routed = await routeNumberToAgent(services.db, principal.workspaceId, number.id, inboundAgentId);
  if (!routed)
    throw new ZodError([
      {
        code: 'custom',
        path: ['inboundAgentId'],
        message: 'no agent of this workspace has this id',
        input: inboundAgentId,
      },
    ]);
  // Setting an agent points the number at the product at its carrier (again: a retry after a carrier's failure), and
  // inboundReady says whether the carrier confirmed it. Removing the agent leaves the carrier as it is: the product
  // then answers the number's calls with a hang-up (api/carriers/twilio-inbound.ts).
  if (routed.inboundAgentId !== null)
    await pointNumberAtProduct(
      { db: services.db, keyring: services.carrierKeyring, publicBaseUrl: services.publicBaseUrl },
      routed.id,
    );
  const pointed =
    (await phoneNumberWhere(services.db, { id: routed.id, workspaceId: principal.workspaceId })) ?? routed;
  const agents = await agentsById(services, principal, [pointed.inboundAgentId]);
  return phoneNumberView(pointed, agents.get(pointed.inboundAgentId ?? ''));
}
