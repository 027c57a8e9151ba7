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
- **Unknown paths** answer 404 \`not_found\`, and a method a known path does not take answers **405
  \`method_not_allowed\`** with \`Allow\` listing the methods it takes; both after authentication.
- **Error answers** list, per status, the codes each operation can answer (the \`error\` enum of its
  schema); the tests check every response against these declarations.
- **Request bodies** are required wherever an operation has one, and are a JSON object: an absent or
  empty body answers **400 \`invalid_body\`** (422 on the single lead push) with an issue at the empty
  path; \`{}\` is the body of an operation whose fields are all optional (exports). Operations without
  a request body do not read one.
- **Input PostgreSQL cannot store** is refused the same way on every operation, before anything reads
  it: a string or object key with U+0000 (NUL) or an unpaired UTF-16 surrogate, a number that is not
  finite (\`1e400\`), objects and arrays nested deeper than 32 levels, in the body, the query or a
  path parameter: **400 \`invalid_body\`** (422 on the single lead push) with an issue naming the
  field. A path that is not valid percent-encoded UTF-8 answers 400 \`invalid_body\` (path \`path\`).
- **Cursors** are opaque: pass back the \`nextCursor\` a list handed out; any other value answers
  400 \`invalid_body\`. Offsets go up to 2147483647.
- **Campaign chat** (\`POST /campaigns/{id}/chat/stream\`): one conversation per campaign, shared by the
  workspace; a fair-use cap of 100 questions per conversation unless the operator sets the workspace's own;
  the question over it answers **429 \`message_limit_reached\`** (no Retry-After: waiting does not lift it),
  nothing stored. \`DELETE /campaigns/{id}/chat/messages\` (a key needs campaigns.delete; plan basic) clears it
  and answers 200 \`{ deleted }\`. The answer is application/x-ndjson: delta lines, then done; a failure after
  the answer began is a last error line. The question is kept when accepted, the answer only once complete.
- **Keys without scopes** may call every /v1 endpoint; every other endpoint refuses them with
  403 \`api_key_not_scoped\`.
`.trim();
