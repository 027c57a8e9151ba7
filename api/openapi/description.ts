/** The decisions this service made where the spec says "not shown", published in the description. */
export const API_DESCRIPTION = `
The outbound calling and messaging workspace API: the public API under /v1 and the workspace API
under unprefixed paths. Every request carries \`Authorization: Bearer <API key>\`.

## Decisions where the interface leaves details open
- **Plan tiers and features.** An endpoint that needs a plan tier answers **403 \`plan_required\`**
  with \`requiredPlan\` (\`basic\` or \`ai\`; \`ai\` includes \`basic\`); one that needs a workspace
  feature answers **403 \`feature_not_enabled\`** with \`requiredFeature\` (\`workflows\` or \`d2c\`).
  Entitlements are checked after the scope.
- **Resources of another workspace** and ids that do not exist both answer **403 \`forbidden\`**
  without \`requiredPermission\`, from the same single query: nothing tells them apart.
- **Single lead push** (\`POST /v1/campaigns/{campaignId}/leads\`): **202** for a new lead, **200** for
  a reused idempotency key (\`deduplicated: true\`, the same \`leadId\`, no second dial).
- **Idempotency key** of a single push: in the body (\`idempotencyKey\`) or the \`Idempotency-Key\`
  header; when both are given they must be equal (else 422 \`invalid_body\`). A lead is answered
  queued once its row is committed; its workflow starts from the row (transactional outbox).
- **Retryable rejections**: a lead that could not be stored (\`database_unavailable\` /
  \`internal_error\`, reason \`lead_not_stored\`) or is over a JOURNEY campaign's live cap
  (\`journey_live_cap_reached\`, reason \`live_cap\`) has \`retryable: true\`; the single push answers
  503 or 429 with \`retryable: true\` and Retry-After.
- **Variable catalog** (\`POST /workflows/variable-catalog\`): a body of the wrong shape answers **400
  \`invalid_body\`** with \`issues\`; a graph that breaks a rule answers **422 \`workflow_invalid\`** with
  \`details\`. Workflow status values: DRAFT (no revision published) and PUBLISHED.
- **Workflows feature**: every unprefixed /workflows endpoint needs the workspace feature
  \`workflows\`; \`GET /v1/workflows/{id}\` needs only workflows.view. Workflows are saved and published
  by the operator CLI (workflows.edit is a scope keys never hold).
- **Journey run decisions**: \`POST /workflows/{id}/runs/{runId}/recover\` (workflows.recover) answers
  409 \`run_not_awaiting_decision\` when the run waits for none; cancelling an ended run answers 409
  \`run_not_running\`; starting a run of a workflow with no published revision, or pushing to a JOURNEY
  campaign whose workflow has none, answers 409 \`workflow_not_published\`.
- **Rate limit**: every authenticated request counts against its key (120 per rolling 60 s unless the
  workspace sets another limit), \`/v1\` and the workspace API alike. Failed authentications count
  against the client address (300 per rolling 60 s). Responses carry \`RateLimit\` and
  \`RateLimit-Policy\` (IETF draft 7); \`reset\` is the number of seconds until the oldest request of
  the window leaves it. \`/health\` and \`/v1/openapi.json\` need no key and are not limited.
- **Unknown paths** answer 404 \`not_found\` after authentication.
- **Endpoints not built yet** answer **501 \`not_implemented\`** once the request has passed every
  check of authentication, scope, entitlement and workspace.
- **Keys without scopes** may call every /v1 endpoint; every other endpoint refuses them with
  403 \`api_key_not_scoped\`.
`.trim();
