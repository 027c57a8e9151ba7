import type { Call } from '../../generated/prisma/client';
import { callIntelligenceSchema } from '../../lib/call-intelligence/call-intelligence';
import {
  leadMessageOutcome,
  leadMessages,
  leadMessageView,
  type LeadMessageRow,
} from '../../lib/whatsapp/lead-message-result';
import { forbidden } from '../../lib/refusal';
import { cursorPage, type CursorPosition } from '../http/pagination';
import type { Principal } from '../door/principal';
import { findOwnedCampaign } from '../campaigns/campaigns';
import { isUuid } from '../../lib/uuid';
import { isSimulatedProvider } from '../../lib/simulators';
import { personNumberOf } from '../../lib/calls/person-number';
import type { AppServices } from '../app-services';
import { leadWorkflowKind } from '../../lib/campaigns/lead-workflow-kind';
import { leadWaitingView, linePositions } from './lead-waiting';
import {
  callsOfWorkspacePage,
  leadOfWorkspace,
  leadsEndedByOptOut,
  leadsOfCampaignPage,
  leadsOfWorkspacePage,
  type LeadWithCalls,
} from './lead-store';

/**
 * A lead's result: where it stands, how its last attempt ended, and every call it made. A WHATSAPP
 * campaign's lead (docs/features/whatsapp/campaigns.md#whatsapp-campaigns-results-result-webhooks-and-kpis) has no calls: its
 * outcome is its message's, attempts 1 once its message is recorded, and `message` its one message (null until
 * recorded, or never sent). `waiting` is what a dial-ladder lead between attempts waits for
 * (docs/features/dial-ladder.md#what-a-lead-waits-for), with its place in the line queue from `positions`.
 */
export function leadResultView(
  lead: LeadWithCalls,
  messages: ReadonlyMap<string, LeadMessageRow>,
  positions: ReadonlyMap<string, number>,
  optedOut: ReadonlySet<string> = new Set(),
) {
  const calls = [...lead.calls].sort((a, b) => a.attempt - b.attempt);
  const result = {
    leadId: lead.id,
    campaignId: lead.campaignId,
    idempotencyKey: lead.idempotencyKey,
    phone: lead.phone,
    name: lead.name,
    status: lead.status,
    waiting: leadWaitingView(lead, positions),
    // A lead ended by its number's opt-out before its next attempt has no call saying it: its result does.
    outcome: optedOut.has(lead.id) ? 'opted_out' : (calls.at(-1)?.outcome ?? null),
    attempts: calls.length,
    calls: calls.map((call) => ({
      attempt: call.attempt,
      direction: call.direction as 'outbound' | 'inbound',
      status: call.status,
      outcome: call.outcome,
      durationMs: call.durationMs,
      provider: call.provider,
      simulated: isSimulatedProvider(call.provider),
      startedAt: call.startedAt.toISOString(),
      endedAt: call.endedAt?.toISOString() ?? null,
    })),
    createdAt: lead.createdAt.toISOString(),
    updatedAt: lead.updatedAt.toISOString(),
  };
  if (leadWorkflowKind(lead.campaign) !== 'WHATSAPP') return result;
  const message = messages.get(lead.id);
  return {
    ...result,
    outcome: message ? leadMessageOutcome(message, lead.status) : null,
    attempts: message ? 1 : 0,
    message: message ? leadMessageView(message) : null,
  };
}

/**
 * The results of these leads, reading the messages of the WHATSAPP ones in one query and the places in
 * the line queue of those that wait for a line in another.
 */
async function leadResultViews(db: AppServices['db'], leads: LeadWithCalls[]) {
  const messaged = leads.filter((lead) => leadWorkflowKind(lead.campaign) === 'WHATSAPP');
  const [messages, positions, optedOut] = await Promise.all([
    leadMessages(
      db,
      messaged.map((lead) => lead.id),
    ),
    linePositions(db, leads),
    leadsEndedByOptOut(
      db,
      leads.filter((lead) => lead.status === 'cancelled').map((lead) => lead.id),
    ),
  ]);
  return (lead: LeadWithCalls) => leadResultView(lead, messages, positions, optedOut);
}

export async function findLeadResult({ db }: AppServices, principal: Principal, leadId: string) {
  const lead = isUuid(leadId) ? await leadOfWorkspace(db, principal.workspaceId, leadId) : null;
  if (!lead) throw forbidden();
  return (await leadResultViews(db, [lead]))(lead);
}

export async function listLeadResults(
  { db }: AppServices,
  principal: Principal,
  query: { limit: number; cursor?: CursorPosition; campaignId?: string },
) {
  const rows = await leadsOfWorkspacePage(db, principal.workspaceId, query);
  return cursorPage(rows, query.limit, await leadResultViews(db, rows.slice(0, query.limit)));
}

export async function listCalls(
  { db }: AppServices,
  principal: Principal,
  query: { limit: number; offset: number; campaignId?: string },
) {
  const { rows, total } = await callsOfWorkspacePage(db, principal.workspaceId, query);
  return { total, items: rows.map(workspaceCallView) };
}

/**
 * The person's number: an inbound call's caller (fromNumber); else the number dialed, which every call has: a test call
 * records it, a lead's call recorded before toNumber existed reads its lead's.
 */
function personNumber(call: Parameters<typeof personNumberOf>[0]): string {
  const phone = personNumberOf(call);
  if (phone === null) throw new Error(`call without a number (neither toNumber nor a lead)`);
  return phone;
}

/** A call as GET /calls lists it (workspaceCallSchema); GET /calls/{id} adds its details to the same summary. */
export function workspaceCallView(call: Call & { lead: { phone: string } | null }) {
  return {
    id: call.id,
    kind: call.kind as 'campaign' | 'test' | 'inbound',
    direction: call.direction as 'outbound' | 'inbound',
    campaignId: call.campaignId,
    leadId: call.leadId,
    phone: personNumber(call),
    attempt: call.attempt,
    provider: call.provider,
    simulated: isSimulatedProvider(call.provider),
    status: call.status,
    outcome: call.outcome,
    durationMs: call.durationMs,
    startedAt: call.startedAt.toISOString(),
    endedAt: call.endedAt?.toISOString() ?? null,
    ...intelligenceColumns(call.intelligence),
  };
}

/** The call intelligence as GET /calls and the exports carry it: the score and the extracted values by field. */
function intelligenceColumns(stored: unknown) {
  const intelligence = callIntelligenceSchema.safeParse(stored);
  if (!intelligence.success) return { evaluationScore: null, extractedFields: null };
  const { extraction, evaluation } = intelligence.data;
  return {
    evaluationScore: evaluation.score,
    extractedFields: Object.fromEntries(Object.entries(extraction).map(([name, field]) => [name, field.value])),
  };
}

/** A campaign's leads, newest first, by offset (spec 4.1: limit default 50, max 200), with the total. */
export async function listCampaignLeads(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  query: { limit: number; offset: number },
) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const { rows, total } = await leadsOfCampaignPage(services.db, campaign.id, query);
  return { items: rows.map(await leadResultViews(services.db, rows)), total };
}

/** The campaign's latest 50 calls, newest first. */
export async function campaignActivity(services: AppServices, principal: Principal, campaignId: string) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  return (await listCalls(services, principal, { limit: 50, offset: 0, campaignId: campaign.id })).items;
}
