-- CreateTable
CREATE TABLE "RateLimitBucket" (
    "bucket" TEXT NOT NULL,
    "hits" TIMESTAMPTZ(3)[],
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RateLimitBucket_pkey" PRIMARY KEY ("bucket")
);

-- CreateIndex
CREATE INDEX "RateLimitBucket_updatedAt_idx" ON "RateLimitBucket"("updatedAt");


-- Sliding log: admits a request when fewer than p_limit were admitted in the last p_window_ms, and
-- records it. The row lock taken by the upsert serialises concurrent requests of one bucket across
-- every API process. Losing the last milliseconds of rate-limit state in a crash is harmless, so the
-- function does not wait for its commit to reach disk.
CREATE FUNCTION rate_limit_take(
  p_bucket text, p_limit integer, p_window_ms integer,
  OUT allowed boolean, OUT remaining integer, OUT reset_ms integer)
LANGUAGE plpgsql
SET synchronous_commit = off
AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
  v_window interval := make_interval(secs => p_window_ms / 1000.0);
  v_hits timestamptz[];
BEGIN
  INSERT INTO "RateLimitBucket" (bucket, hits, "updatedAt") VALUES (p_bucket, '{}', v_now)
  ON CONFLICT (bucket) DO UPDATE SET "updatedAt" = EXCLUDED."updatedAt"
  RETURNING hits INTO v_hits;
  v_hits := ARRAY(SELECT h FROM unnest(coalesce(v_hits, '{}'::timestamptz[])) AS h WHERE h > v_now - v_window ORDER BY h);
  allowed := cardinality(v_hits) < p_limit;
  IF allowed THEN
    v_hits := v_hits || v_now;
  END IF;
  UPDATE "RateLimitBucket" SET hits = v_hits WHERE bucket = p_bucket;
  remaining := greatest(p_limit - cardinality(v_hits), 0);
  reset_ms := CASE WHEN cardinality(v_hits) = 0 THEN 0
    ELSE greatest(ceil(extract(epoch FROM (v_hits[1] + v_window - v_now)) * 1000)::integer, 0) END;
END;
$$;

-- The door of every authenticated request, in one round trip: the key with its member and workspace
-- as they are now, and one request taken from the key's rate-limit bucket.
-- No row: the key is unknown, revoked, expired or its workspace deleted.
CREATE FUNCTION door_admit(p_secret_hash text, p_default_limit integer, p_window_ms integer)
RETURNS TABLE (
  key_id uuid, workspace_id uuid, member_id uuid, scoped boolean, scopes text[], member_role text,
  member_status text, workspace_status text, plan text, features text[], rate_limit integer,
  allowed boolean, remaining integer, reset_ms integer)
LANGUAGE plpgsql
SET synchronous_commit = off
AS $$
#variable_conflict use_column
BEGIN
  SELECT k.id, k."workspaceId", k."memberId", k.scoped, k.scopes, m.role::text, m.status::text,
         w.status::text, w.plan::text, w.features, coalesce(w."rateLimitPerMinute", p_default_limit)
    INTO key_id, workspace_id, member_id, scoped, scopes, member_role, member_status,
         workspace_status, plan, features, rate_limit
    FROM "ApiKey" k
    JOIN "Member" m ON m.id = k."memberId"
    JOIN "Workspace" w ON w.id = k."workspaceId"
   WHERE k."secretHash" = p_secret_hash
     AND k."revokedAt" IS NULL
     AND (k."expiresAt" IS NULL OR k."expiresAt" > clock_timestamp())
     AND w."deletedAt" IS NULL;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT t.allowed, t.remaining, t.reset_ms INTO allowed, remaining, reset_ms
    FROM rate_limit_take('key:' || key_id::text, rate_limit, p_window_ms) AS t;
  RETURN NEXT;
END;
$$;
