-- CreateTable
-- UNLOGGED: rate-limit state is worth less than a WAL flush per request. Its changes write no WAL, so
-- the door's commits do not wait for the disk; after a crash PostgreSQL empties the table, which only
-- forgets the last minute of request counts.
CREATE UNLOGGED TABLE "RateLimitBucket" (
    "bucket" TEXT NOT NULL,
    "hits" TIMESTAMPTZ(3)[],
    "lastAdmitted" BOOLEAN NOT NULL DEFAULT true,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RateLimitBucket_pkey" PRIMARY KEY ("bucket")
);

-- CreateIndex
CREATE INDEX "RateLimitBucket_updatedAt_idx" ON "RateLimitBucket"("updatedAt");


-- Sliding log: admits a request when fewer than p_limit were admitted in the last p_window_ms, and
-- records it, in one statement. The upsert holds the bucket's row lock while it reads and rewrites the
-- log, so concurrent requests of one bucket are serialised across every API process. PL/pgSQL keeps the
-- statement's plan across calls (a LANGUAGE sql function is planned anew each time, measured slower).
CREATE FUNCTION rate_limit_take(
  p_bucket text, p_limit integer, p_window_ms integer,
  OUT allowed boolean, OUT remaining integer, OUT reset_ms integer)
LANGUAGE plpgsql
AS $$
DECLARE
  v_window interval := p_window_ms * interval '1 millisecond';
BEGIN
  INSERT INTO "RateLimitBucket" AS b (bucket, hits, "lastAdmitted", "updatedAt")
  VALUES (p_bucket, ARRAY[clock_timestamp()], p_limit > 0, clock_timestamp())
  ON CONFLICT (bucket) DO UPDATE SET
    hits = (SELECT coalesce(array_agg(h ORDER BY h), '{}')
                   || CASE WHEN count(*) < p_limit THEN ARRAY[EXCLUDED."updatedAt"] ELSE '{}' END
              FROM unnest(b.hits) AS h
             WHERE h > EXCLUDED."updatedAt" - v_window),
    "lastAdmitted" = (SELECT count(*) < p_limit FROM unnest(b.hits) AS h WHERE h > EXCLUDED."updatedAt" - v_window),
    "updatedAt" = EXCLUDED."updatedAt"
  RETURNING b."lastAdmitted",
            greatest(p_limit - cardinality(b.hits), 0),
            CASE WHEN cardinality(b.hits) = 0 THEN 0
                 ELSE greatest(ceil(extract(epoch FROM (b.hits[1] + v_window - b."updatedAt")) * 1000), 0)::integer END
  INTO allowed, remaining, reset_ms;
END;
$$;

-- The door of every authenticated request, in one round trip: the key with its member and workspace
-- as they are now, and one request taken from the key's rate-limit bucket. No row: the key is unknown,
-- revoked, expired or its workspace deleted.
CREATE FUNCTION door_admit(p_secret_hash text, p_default_limit integer, p_window_ms integer)
RETURNS TABLE (
  key_id uuid, workspace_id uuid, member_id uuid, scoped boolean, scopes text[], member_role text,
  member_status text, workspace_status text, plan text, features text[], rate_limit integer,
  allowed boolean, remaining integer, reset_ms integer)
LANGUAGE plpgsql
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
