/**
 * The one list of error codes. HTTP error bodies carry them in `error`; Temporal failures carry them
 * as ApplicationFailure `type`. Code is matched on these strings, never on class names. Services refuse
 * with a code (lib/refusal.ts); the HTTP status of each is given once, in api/http/error-statuses.ts.
 */
export const ErrorCode = {
  // Spec section 7.
  internal_error: 'internal_error',
  invalid_body: 'invalid_body',
  invalid_api_key: 'invalid_api_key',
  unauthorized: 'unauthorized',
  api_key_owner_inactive: 'api_key_owner_inactive',
  forbidden: 'forbidden',
  workspace_pending_approval: 'workspace_pending_approval',
  workspace_suspended: 'workspace_suspended',
  api_key_not_scoped: 'api_key_not_scoped',
  api_key_not_allowed: 'api_key_not_allowed',
  voice_not_found: 'voice_not_found',
  rate_limited: 'rate_limited',
  message_limit_reached: 'message_limit_reached',
  preview_not_supported: 'preview_not_supported',
  provider_error: 'provider_error',
  database_unavailable: 'database_unavailable',
  workflow_invalid: 'workflow_invalid',
  // Decided here where the spec says "not shown"; documented in the OpenAPI description and
  // docs/errors.md, docs/api-decisions.md.
  not_found: 'not_found',
  method_not_allowed: 'method_not_allowed',
  plan_required: 'plan_required',
  feature_not_enabled: 'feature_not_enabled',
  temporal_unavailable: 'temporal_unavailable',
  campaign_not_accepting_leads: 'campaign_not_accepting_leads',
  invalid_campaign_transition: 'invalid_campaign_transition',
  campaign_stopped: 'campaign_stopped',
  workflow_not_published: 'workflow_not_published',
  campaign_not_draft: 'campaign_not_draft',
  journey_live_cap_reached: 'journey_live_cap_reached',
  run_not_awaiting_decision: 'run_not_awaiting_decision',
  run_not_running: 'run_not_running',
  // Agents: DELETE /agents/{id} of an agent a live campaign or a phone number uses; starting a campaign whose agent is gone.
  agent_in_use: 'agent_in_use',
  agent_limit_reached: 'agent_limit_reached',
  agent_deleted: 'agent_deleted',
  // Dictionaries: 409 when another dictionary of the workspace has the externalId, or the workspace holds the most it may.
  external_id_taken: 'external_id_taken',
  dictionary_limit_reached: 'dictionary_limit_reached',
  knowledge_base_limit_reached: 'knowledge_base_limit_reached',
  document_limit_reached: 'document_limit_reached',
  // Background audio: 409 when the slug is a platform asset's or another upload's of the workspace, or the workspace holds the most uploads it may.
  background_audio_slug_taken: 'background_audio_slug_taken',
  background_audio_limit_reached: 'background_audio_limit_reached',
  // Calls: 409 when extraction, evaluation or translation is asked of a call that has no transcript.
  call_has_no_transcript: 'call_has_no_transcript',
  // A CPU step over tenant text (the rules' call intelligence, a fetched transcript's redaction) past its time budget
  // in its worker thread (lib/cpu-budget, docs/cpu-budget.md): a Temporal failure type only, never retried.
  cpu_budget_exceeded: 'cpu_budget_exceeded',
  // Transcript translation: 422 when no installed translator pair goes from the source to the target language.
  translation_pair_unsupported: 'translation_pair_unsupported',
  // Calls: 409 when a call holds as many reported issues as it may (POST /calls/{id}/issues).
  call_issue_limit_reached: 'call_issue_limit_reached',
  // Carrier status events (POST /telephony/{provider}/events): 401 unsigned, badly signed or stale; 404 unknown call or provider.
  invalid_signature: 'invalid_signature',
  unknown_call: 'unknown_call',
  // WhatsApp webhooks (POST /whatsapp/webhook): 401 invalid_signature (unsigned, badly signed or stale), and 404 when a recent
  // event names a message or template of this service's number or Business Account not recorded yet (the provider retries).
  unknown_whatsapp_target: 'unknown_whatsapp_target',
  // Test calls (POST /calls/test) and WhatsApp sends (POST /whatsapp/messages): 409 when the number to call or message is
  // on the workspace's Do-Not-Call list.
  number_on_do_not_call: 'number_on_do_not_call',
  // Speech analysis (lib/speech, docs/features/speech.md): a recording that does not decode as audio, a file over
  // the size limit, audio over the length limit; a language the recogniser has no model for.
  recording_not_audio: 'recording_not_audio',
  recording_too_large: 'recording_too_large',
  recording_too_long: 'recording_too_long',
  speech_language_unsupported: 'speech_language_unsupported',
  speech_analysis_in_progress: 'speech_analysis_in_progress',
  // Speech reps and teams: 409 when another team of the workspace has the name, or the workspace holds the most teams it may.
  speech_team_name_taken: 'speech_team_name_taken',
  speech_team_limit_reached: 'speech_team_limit_reached',
  // Credits: 402 when the balance does not cover what an operation needs (its price, or a test call's first minute), with balance and required; nothing is performed.
  insufficient_credits: 'insufficient_credits',
  // A web test session's socket (GET /v1/test-sessions/{id}/socket) asked without Upgrade: websocket: 426.
  upgrade_required: 'upgrade_required',
  // WhatsApp templates (POST /whatsapp/templates): 409 when the workspace has no connected sender (its WhatsApp
  // Business Account, which templates belong to, comes with one), or another template has the name in the language.
  whatsapp_sender_required: 'whatsapp_sender_required',
  whatsapp_template_exists: 'whatsapp_template_exists',
  whatsapp_window_closed: 'whatsapp_window_closed',
  whatsapp_campaign_not_configured: 'whatsapp_campaign_not_configured',
  campaign_not_whatsapp: 'campaign_not_whatsapp',
  whatsapp_template_not_approved: 'whatsapp_template_not_approved',
  whatsapp_sender_disconnected: 'whatsapp_sender_disconnected',
  // Carrier connections (docs/features/carriers.md): a call from a number bound to no live carrier connection of its
  // workspace (409 where an API answers it; the adapters' failure type).
  no_carrier_connection: 'no_carrier_connection',
  // WhatsApp: while SIMULATORS is disabled (docs/configuration.md#simulators), a send, a campaign's messaging or its
  // start from a sender bound to no live Meta connection (409): only the simulated provider could carry it.
  no_whatsapp_connection: 'no_whatsapp_connection',
  // Failure types of activities (Temporal ApplicationFailure.type).
  lead_not_found: 'lead_not_found',
  webhook_delivery_failed: 'webhook_delivery_failed',
  journey_run_not_found: 'journey_run_not_found',
  journey_webhook_rejected: 'journey_webhook_rejected',
  journey_webhook_failed: 'journey_webhook_failed',
  journey_call_without_lead: 'journey_call_without_lead',
  call_not_found: 'call_not_found',
  // Export jobs: 409 while the file is being written, 409 when the job failed, 410 after retention; activity failure types.
  export_not_ready: 'export_not_ready',
  export_failed: 'export_failed',
  export_expired: 'export_expired',
  export_not_found: 'export_not_found',
  // Live sheets (docs/features/sheets.md): 409 a second sheet for a campaign, 404 a campaign without one,
  // 409 a download before the first sync published the files; sheet_sync_failed types a chunk's failure.
  sheet_exists: 'sheet_exists',
  sheet_not_found: 'sheet_not_found',
  sheet_not_ready: 'sheet_not_ready',
  sheet_sync_failed: 'sheet_sync_failed',
  // Call recordings (GET /calls/{id}/recording, docs/features/recordings.md): 404 a call never recorded, 409 while the
  // carrier is still recording it, 410 once deleted (its retention, or at the carrier).
  call_has_no_recording: 'call_has_no_recording',
  recording_not_ready: 'recording_not_ready',
  recording_deleted: 'recording_deleted',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
