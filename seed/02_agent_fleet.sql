-- Agent fleet fixture: :agent_count agents (default 5,000), all `Online`, heartbeats staggered over the
-- previous 60 seconds.
--
--   id    lt-agent-0000001 …          name  loadtest-agent-0000001 … (zero-padded: names sort)
--   hostname  loadtest-agent-0000001.loadtest.example.com
--   os        by seq % 10: 0-7 linux (80 %), 8 windows (10 %), 9 darwin (10 %)
--   architecture  windows amd64, darwin arm64, linux arm64 when (seq / 10) % 4 = 0 else amd64
--                 (5,000 agents: 3,500 amd64 / 1,500 arm64)
--   ip_address    10.<seq bytes> as text only: nothing dials it
--   version `loadtest`, api_key_hash `loadtest-unused` (NOT NULL, never matches a real key's hash)
--   last_heartbeat_at  now() - 60 s * (seq - 1) / agent_count  -> in (now - 60 s, now]
--   registered_at      now() - 60 s - (agent_count - seq) µs   -> before every heartbeat, distinct,
--                                                                 in name order
-- Every text column certctl's heartbeat and agent scans read is non-NULL; retired_at/retired_reason stay
-- NULL exactly as for an agent registered through the API (certctl scans them into pointers).
--   psql -X -q -v ON_ERROR_STOP=1 -v agent_count=5000 -v team_id=… -v owner_id=… … -f seed/02_agent_fleet.sql
-- Agents reference no other table, but the file still requires the base rows' ids (the LT_*_ID knobs;
-- docker-compose.yml passes them) and refuses to run before 00_base.sql, so a run never starts
-- half-seeded. One set-based INSERT … SELECT in one transaction; ON CONFLICT DO NOTHING makes a rerun
-- add nothing. See seed/README.md.
\set ON_ERROR_STOP on

-- SEED_AGENTS's default (internal/harness/knobs.go; test/seed checks they agree). An empty value (an
-- unset SEED_AGENTS passed through as -v agent_count="") means the default too.
\if :{?agent_count} \else \set agent_count '' \endif
SELECT coalesce(nullif(btrim(:'agent_count'), ''), '5000') AS agent_count \gset
SELECT :'agent_count' AS seed_count \gset

\set seed_file seed/02_agent_fleet.sql
\set seed_count_name agent_count
\set seed_detail 'Agents have no foreign keys of their own; the fleet is only seeded on top of the harness''s base rows.'

BEGIN;

\ir lib/require_base.sql

INSERT INTO agents (
    id, name, hostname, status, last_heartbeat_at, registered_at, api_key_hash,
    os, architecture, ip_address, version)
SELECT 'lt-agent-' || seq,
       'loadtest-agent-' || seq,
       'loadtest-agent-' || seq || '.loadtest.example.com',
       'Online',
       now() - interval '60 seconds' * (i - 1) / n,
       now() - interval '60 seconds' - interval '1 microsecond' * (n - i),
       'loadtest-unused',
       CASE i % 10 WHEN 8 THEN 'windows' WHEN 9 THEN 'darwin' ELSE 'linux' END,
       CASE WHEN i % 10 = 8 THEN 'amd64'
            WHEN i % 10 = 9 THEN 'arm64'
            WHEN (i / 10) % 4 = 0 THEN 'arm64'
            ELSE 'amd64' END,
       '10.' || ((i >> 16) & 255) || '.' || ((i >> 8) & 255) || '.' || (i & 255),
       'loadtest'
FROM (SELECT :'agent_count'::integer AS n) AS knob
CROSS JOIN LATERAL generate_series(1, knob.n) AS i
-- 7 digits, more only past 9,999,999 (lpad alone would truncate and collide).
CROSS JOIN LATERAL (SELECT lpad(i::text, greatest(7, length(i::text)), '0') AS seq) AS s
ON CONFLICT DO NOTHING;

-- Fresh statistics before certctl plans its first query against the new rows.
ANALYZE agents;

COMMIT;
