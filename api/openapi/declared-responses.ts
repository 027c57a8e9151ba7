import { ErrorCode } from '../../lib/error-codes';
import { isPublicPath } from '../door/access';
import { isSignedWebhook, type ResponseDeclaration, type RouteDefinition } from '../http/route';
import { errorBodyFor } from './error-schema';

/** One answer a route can give: its declaration, and for an error answer the codes it can carry. */
export interface DeclaredResponse extends ResponseDeclaration {
  errorCodes?: readonly ErrorCode[];
}

/** What each code means, as the description lists it. Where one code means different things by status, the status decides. */
const MEANING: Partial<Record<ErrorCode, string>> = {
  invalid_body: 'the body, query or path failed validation (issues names each field)',
  not_found: 'no endpoint has this path',
  method_not_allowed: 'the path does not take this method; `Allow` lists those it takes',
  unauthorized: 'no `Authorization: Bearer` header, or an empty token',
  invalid_api_key: 'the key is unknown, revoked or expired, or its workspace was deleted',
  api_key_owner_inactive: 'the member the key acts for was removed or suspended',
  workspace_pending_approval: 'the workspace is not approved yet',
  workspace_suspended: 'the workspace is suspended',
  forbidden:
    'the key lacks `requiredPermission`, or the resource is unknown or of another workspace (nothing tells them apart)',
  api_key_not_scoped: 'a key without scopes, on an endpoint outside /v1',
  api_key_not_allowed: 'this action is refused to API keys',
  plan_required: 'the workspace plan lacks `requiredPlan`',
  feature_not_enabled: 'the workspace lacks `requiredFeature`',
  rate_limited:
    "over the key's rate limit (or, unauthenticated, the address's failed-authentication limit; a signed public webhook: its address's or its connection's limit); `Retry-After` (always, with this code) and `requestId`",
  database_unavailable: 'PostgreSQL cannot be reached; retry after `Retry-After`',
  temporal_unavailable: 'Temporal cannot be reached; nothing was changed; retry after `Retry-After`',
  voice_not_found: 'no voice with this id is available to the workspace (GET /voices lists them)',
  preview_not_supported: "the voice's provider offers no preview",
  provider_error:
    'the speech synthesiser could not make the preview, the translator the translation, or the WhatsApp provider refused or failed the request (`upstreamStatus`: its HTTP status; 503 cannot run or unreachable, 500 failed, 504 too slow)',
  translation_pair_unsupported:
    'no installed language pair translates from the source language into the target language (`pairs` lists those installed)',
  invalid_campaign_transition: "the campaign's state does not allow this action (`from`, `action`)",
  campaign_stopped: 'a stopped campaign cannot be changed',
  campaign_not_draft: 'contacts are added only to a DRAFT campaign (`status`)',
  campaign_not_accepting_leads: 'the campaign is not a standing API campaign, or is stopped',
  workflow_not_published: 'the workflow has no published revision',
  journey_live_cap_reached:
    'the JOURNEY campaign has maxLiveRuns runs alive: resend later with the same key (`retryable`)',
  workflow_invalid: 'the graph breaks a rule (`details`)',
  run_not_running: 'the run has ended (`status`)',
  run_not_awaiting_decision: 'the run waits for no decision (`status`)',
  export_not_ready: 'the job is queued or running (`status`, `percent`)',
  export_failed: 'the job failed (`reason`)',
  export_expired: 'the file was deleted after its retention (`expiresAt`)',
  knowledge_base_limit_reached: 'the workspace has as many knowledge bases as it may (`detail`)',
  document_limit_reached: 'the knowledge base holds as many documents as it may (`detail`)',
  background_audio_slug_taken: "the slug is a platform asset's or another upload's of the workspace (`detail`)",
  background_audio_limit_reached: 'the workspace holds as many background audio uploads as it may (`detail`)',
  external_id_taken: 'another dictionary of the workspace has this externalId (`detail`)',
  agent_limit_reached: 'the workspace has as many live agents as it may, 200 (`detail`)',
  dictionary_limit_reached: 'the workspace has as many dictionaries as it may (`detail`)',
  whatsapp_sender_required:
    'the workspace has no connected WhatsApp sender: templates belong to its WhatsApp Business Account, which comes with a sender (`detail`)',
  whatsapp_template_exists: 'another template of the workspace has this name in this language (`detail`)',
  unknown_whatsapp_target:
    "an event of the body names a message or template of this service's number or Business Account that is not recorded yet, and is recent: the rest of the body is applied; the provider retries it",
  call_issue_limit_reached: 'the call holds as many reported issues as it may, 100 (`detail`)',
  call_has_no_recording:
    'the call was not recorded: its workspace was not recording calls when it was answered, it was never answered, or the carrier made none (`detail`)',
  recording_not_ready: 'the carrier is still recording the call, or has not said it is complete (`status`)',
  recording_deleted:
    'the recording was deleted after its retention, or the carrier no longer has it (`deletedAt`, `detail`)',
  message_limit_reached:
    "the campaign's conversation holds its cap of questions; DELETE /campaigns/{id}/chat/messages clears it (`detail`; no `Retry-After`: waiting does not lift it)",
};

const INTERNAL_ERROR_BY_STATUS: Record<number, string> = {
  400: 'the body is not valid JSON',
  413: 'the body is over 1 MB (a signed public webhook: over its own cap, 64 KiB unless its route says more), refused before it is parsed',
  500: 'an unexpected failure; nothing of the cause is told',
  503: 'the lead could not be stored: resend with the same key (`retryable`)',
};

const meaningOf = (status: number, code: ErrorCode) =>
  (code === ErrorCode.internal_error ? INTERNAL_ERROR_BY_STATUS[status] : MEANING[code]) ?? code;

/** Answers that carry headers whatever their code. */
const ERROR_HEADERS: Record<number, readonly string[]> = { 429: ['Retry-After'], 503: ['Retry-After'] };

/**
 * Codes whose answers lack their status's usual headers, so that a status carrying one of them does not
 * declare those headers as always sent: a campaign conversation's cap does not lift with time (no Retry-After).
 */
const WITHOUT_STATUS_HEADERS: readonly ErrorCode[] = [ErrorCode.message_limit_reached];

const DOOR_REFUSALS = [
  ErrorCode.api_key_owner_inactive,
  ErrorCode.workspace_pending_approval,
  ErrorCode.workspace_suspended,
];

/** 403 codes of the door, from the route's access rule (api/door/access.ts). */
function accessRefusals(route: RouteDefinition): ErrorCode[] {
  const { access } = route;
  if ('public' in access) return [];
  if ('keysRefused' in access) return [...DOOR_REFUSALS, ErrorCode.api_key_not_allowed];
  return [
    ...DOOR_REFUSALS,
    ...(access.permission ? [ErrorCode.forbidden] : []),
    ...(isPublicPath(route.path) ? [] : [ErrorCode.api_key_not_scoped]),
    ...(access.requires ? ['plan' in access.requires ? ErrorCode.plan_required : ErrorCode.feature_not_enabled] : []),
  ];
}

/** Error codes by status that every route of its kind answers: the door, validation, failures. */
function sharedErrors(route: RouteDefinition): Array<[number, ErrorCode]> {
  // Any route may find PostgreSQL unreachable (or its pool exhausted past its wait), public ones too: a carrier's
  // callback is then answered 503 and sent again by the carrier.
  // (A route whose 503 is an answer of its own, GET /health's, declares that instead.)
  const errors: Array<[number, ErrorCode]> = [[500, ErrorCode.internal_error]];
  if (!route.responses?.[503]) errors.push([503, ErrorCode.database_unavailable]);
  // A signed public webhook is throttled by address and by connection before its body is read.
  if (isSignedWebhook(route)) errors.push([429, ErrorCode.rate_limited]);
  if (!('public' in route.access)) {
    errors.push([401, ErrorCode.unauthorized], [401, ErrorCode.invalid_api_key], [429, ErrorCode.rate_limited]);
    for (const code of accessRefusals(route)) errors.push([403, code]);
  }
  // Path parameters and query are checked on every route that has them (api/http/register-routes.ts).
  if (route.path.includes('{') || route.query) errors.push([400, ErrorCode.invalid_body]);
  if (route.body) {
    errors.push(
      [400, ErrorCode.internal_error],
      [route.validationStatus ?? 400, ErrorCode.invalid_body],
      [413, ErrorCode.internal_error],
    );
  }
  return errors;
}

function errorResponse(status: number, codes: readonly ErrorCode[]): DeclaredResponse {
  return {
    description: codes.map((code) => `\`${code}\`: ${meaningOf(status, code)}.`).join(' '),
    schema: errorBodyFor(codes),
    errorCodes: codes,
    ...(ERROR_HEADERS[status] && !codes.some((code) => WITHOUT_STATUS_HEADERS.includes(code))
      ? { headers: ERROR_HEADERS[status] }
      : {}),
  };
}

/**
 * Every answer of a route, by status: what it declares next to its handler plus what every route of its
 * kind answers. The one source of both the OpenAPI description and the tests' check of every response.
 */
export function declaredResponses(route: RouteDefinition): Record<number, DeclaredResponse> {
  const codesByStatus = new Map<number, ErrorCode[]>();
  const add = (status: number, code: ErrorCode) => {
    const codes = codesByStatus.get(status) ?? [];
    if (!codes.includes(code)) codes.push(code);
    codesByStatus.set(status, codes);
  };
  for (const [status, code] of sharedErrors(route)) add(status, code);
  for (const [status, codes] of Object.entries(route.errors ?? {}))
    for (const code of codes ?? []) add(Number(status), code);

  const responses: Record<number, DeclaredResponse> = {};
  for (const [status, declaration] of Object.entries(route.responses ?? {})) responses[Number(status)] = declaration;
  for (const [status, codes] of codesByStatus) {
    if (responses[status])
      throw new Error(
        `${route.method.toUpperCase()} ${route.path}: ${status} is declared with a body of its own and as an error`,
      );
    responses[status] = errorResponse(status, codes);
  }
  return responses;
}

/**
 * Answers to a request no route takes: 405 (with Allow) on a known path, 404 elsewhere, both after the
 * door (an unauthenticated client learns nothing about the paths); 400 for a path that is not valid
 * percent-encoded UTF-8, before it.
 */
export function unroutedResponses(pathKnown: boolean): Record<number, DeclaredResponse> {
  return {
    ...(pathKnown
      ? { 405: { ...errorResponse(405, [ErrorCode.method_not_allowed]), headers: ['Allow'] } }
      : { 404: errorResponse(404, [ErrorCode.not_found]) }),
    400: errorResponse(400, [ErrorCode.invalid_body]),
    401: errorResponse(401, [ErrorCode.unauthorized, ErrorCode.invalid_api_key]),
    403: errorResponse(403, DOOR_REFUSALS),
    429: errorResponse(429, [ErrorCode.rate_limited]),
    500: errorResponse(500, [ErrorCode.internal_error]),
    503: errorResponse(503, [ErrorCode.database_unavailable]),
  };
}
