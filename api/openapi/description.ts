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
