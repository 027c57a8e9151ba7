import { ErrorCode } from '../../lib/error-codes';

/**
 * The HTTP status of each error code: the one place where a refusal (lib/refusal.ts) becomes a status.
 * Services refuse with a code; the error handler answers it with the status here. Exhaustive: a code
 * added to lib/error-codes.ts without a status here fails the type check. null: the code is never an
 * HTTP answer (a Temporal failure type only); a refusal carrying one is a bug, answered 500.
 *
 * Two answers are decided elsewhere, each narrowly: `invalid_body` takes the route's `validationStatus`
 * (400 unless the route declares 422, as the spec's single lead push does), and a route table may answer
 * with an ApiError of its own status (api/http/api-error.ts; test/openapi.test.ts lists each such case).
 * The edge's own failures (a body that is not JSON 400, over 1 MB 413) are answered by the error handler.
 */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number | null>> = {
  internal_error: 500,
  invalid_body: 400,
  invalid_api_key: 401,
  unauthorized: 401,
  api_key_owner_inactive: 403,
  forbidden: 403,
  workspace_pending_approval: 403,
  workspace_suspended: 403,
  api_key_not_scoped: 403,
  api_key_not_allowed: 403,
  voice_not_found: 404,
  rate_limited: 429,
  message_limit_reached: 429,
  preview_not_supported: 501,
  provider_error: 502,
  database_unavailable: 503,
  workflow_invalid: 422,
  not_found: 404,
  method_not_allowed: 405,
  plan_required: 403,
  feature_not_enabled: 403,
  temporal_unavailable: 503,
  campaign_not_accepting_leads: 409,
  invalid_campaign_transition: 409,
  campaign_stopped: 409,
  workflow_not_published: 409,
  campaign_not_draft: 409,
  journey_live_cap_reached: 429,
  run_not_awaiting_decision: 409,
  run_not_running: 409,
  agent_in_use: 409,
  agent_limit_reached: 409,
  agent_deleted: 409,
  external_id_taken: 409,
  dictionary_limit_reached: 409,
  knowledge_base_limit_reached: 409,
  document_limit_reached: 409,
  background_audio_slug_taken: 409,
  background_audio_limit_reached: 409,
  call_has_no_transcript: 409,
  cpu_budget_exceeded: null,
  translation_pair_unsupported: 422,
  call_issue_limit_reached: 409,
  invalid_signature: 401,
  unknown_call: 404,
  unknown_whatsapp_target: 404,
  number_on_do_not_call: 409,
  recording_not_audio: 422,
  recording_too_large: 422,
  recording_too_long: 422,
  speech_language_unsupported: 422,
  speech_analysis_in_progress: 409,
  speech_team_name_taken: 409,
  speech_team_limit_reached: 409,
  insufficient_credits: 402,
  upgrade_required: 426,
  whatsapp_sender_required: 409,
  whatsapp_template_exists: 409,
  whatsapp_window_closed: 409,
  whatsapp_campaign_not_configured: 409,
  campaign_not_whatsapp: 409,
  whatsapp_template_not_approved: 409,
  whatsapp_sender_disconnected: 409,
  no_carrier_connection: 409,
  no_whatsapp_connection: 409,
  lead_not_found: null,
  webhook_delivery_failed: null,
  journey_run_not_found: null,
  journey_webhook_rejected: null,
  journey_webhook_failed: null,
  journey_call_without_lead: null,
  call_not_found: null,
  export_not_ready: 409,
  export_failed: 409,
  export_expired: 410,
  export_not_found: null,
  sheet_exists: 409,
  sheet_not_found: 404,
  sheet_not_ready: 409,
  sheet_sync_failed: null,
  call_has_no_recording: 404,
  recording_not_ready: 409,
  recording_deleted: 410,
};

/** The status a refusal of `code` is answered with on a route whose failed validation answers `validationStatus`. */
export function refusalStatus(code: ErrorCode, validationStatus = 400): number | null {
  return code === ErrorCode.invalid_body ? validationStatus : ERROR_STATUS[code];
}
