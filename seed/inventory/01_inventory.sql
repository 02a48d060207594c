-- Growth inventory: what a fleet of :growth_certs certificates (default 10,000) leaves in certctl's
-- database after a year at 47-day rotation, so that latency can be measured against the size of the
-- inventory (1k, 10k, 100k, 1M certificates) instead of against a fresh install.
--
-- Per certificate lt-grow-0000001 … (name loadtest-grow-0000001, CN/SAN loadtest-grow-0000001.loadtest.example.com):
--   managed_certificates  Active, expiring in (now + 31 d, now + 47 d]: evenly spread, in name order, so
--                         none is due for renewal when certctl starts; created_at 329-345 days ago,
--                         distinct, in name order
--   certificate_versions  8 (365 / 47 = 7.8 rotations, rounded up), each valid 47 days and issued as the
--                         previous one ends, the last one being the certificate's expires_at
--   jobs                  2 per rotation, Completed: the Renewal job the renewal scan creates
--                         (service/renewal.go:268) and the Deployment job signing creates for each bound
--                         target (renewal.go:801, 870): one target per certificate here
--   audit_events          the rows those rotations leave: 91 per certificate with growth_audit=all
--                         (table below), 58 with growth_audit=service, none with growth_audit=none
-- and, per 10 certificates, one agent (Offline) with one NGINX target and the 10 binding rows: certctl
-- creates a Deployment job only for a bound target and hands the agent the renewal's CSR job only through
-- a binding (docs/certctl-findings.md#no-target-binding), so a year of deployed rotations needs them.
-- Row counts at 1,000,000 certificates: 1M certificates, 100K agents, 100K targets, 1M bindings,
-- 8M versions, 16M jobs, 91M audit rows (58M with growth_audit=service); see seed/growth-notes.md.
--
-- The rotations of the whole fleet follow one schedule: rotation g = (k - 1) * n + i (version k of
-- certificate i, n certificates) starts at now - (9 - k) * 47 d + 31 d + (i - 1) * 16 d / n (lt_grow_at),
-- so each version's rotations are spread over 16 days, in the order of g, and everything this file
-- records as done happened before now.
--
-- Audit rows per rotation (agent key generation, certctl's default; lines as at 151107c, the server code
-- being the same at 67dbd18 but for certificate.go, 10 lines earlier there; 14 positions, each row's
-- timestamp after the one before it):
--   p  action                       actor                 written by
--   0  certificate_created          loadtest (operator)   service/certificate.go:205  (k = 1 only)
--   1  api_post /api/v1/certificates  the key's name      api/middleware/audit.go:169, 245 (k = 1 only)
--   2  expiration_alert_sent        system                service/renewal.go:424: (cert, 30 days, Email)
--                                                         is deduplicated for good by
--                                                         notification.go:258, so k = 1 only
--   3  renewal_job_created          system                renewal.go:294
--   4  renewal_awaiting_csr         system                renewal.go:523
--   5  renewal_job_completed        system                renewal.go:809 (agent's CSR signed)
--   6  csr_submitted                the agent             service/agent.go:167
--   7  api_post …/agents/{id}/csr   the agent's key       middleware
--   8  job_status_reported Running  the agent             agent.go:327 (cmd/agent/deploy.go:84)
--   9  api_post …/jobs/{job}/status                       middleware
--  10  certificate_retrieved        the agent             agent.go:284 (deploy.go:437)
--  11  api_get …/certificates/{id}                        middleware
--  12  job_status_reported Completed                      agent.go:327 (deploy.go:236)
--  13  api_post …/jobs/{job}/status                       middleware
-- = 14 rows in a certificate's first rotation and 11 in each later one: 14 + 7 * 11 = 91 per certificate.
-- growth_audit=service leaves out the middleware's api_* rows (1, 7, 9, 11, 13): 9 + 7 * 7 = 58.
-- Not counted: the agents' work polls and heartbeats (one api_* row each, every 30 s / 60 s whatever
-- the rotations do) and the verification row, which certctl's agent never sends for a target without a
-- host and port (docs/certctl-findings.md#deploy-verify-skipped).
--
-- Both builds: audit_events is written only through the columns both have (migrations 000001, 000032).
-- On main (151107c) a BEFORE INSERT trigger (migration 000047) chains every row to the single row of
-- audit_chain_head, and audit_events_verify_chain() walks the chain by (timestamp, id). So on main:
--   * the rows go in through the trigger, so every prev_hash/row_hash is certctl's own, and in
--     (timestamp, id) order, so the chain verifies, as long as nothing in audit_events is dated after the
--     history's start. certctl writes a row as it starts (auth.demo_residual_grants_detected: migration
--     000029 grants actor-demo-anon, cmd/server/preflight_demo_residual.go:104) and one per API call, so
--     that holds only when this runs after certctl-migrate and before certctl first starts. Otherwise no
--     order can make the chain verify (a row certctl chained cannot be rewritten): the file says so in one
--     WARNING and goes on, and the verifier will stop at the first seeded row and report a break;
--   * in batches of 20 rotations (about 220 rows), each committed on its own, after the transaction
--     that writes everything else: within one transaction every insert rewrites the head row again and
--     each lookup of it walks all the versions that transaction made, so a single transaction grows as
--     the square of its rows. A run stopped between batches is resumed by running the file again;
--   * never ON CONFLICT DO NOTHING: the trigger fires, and advances the head, before the conflict check,
--     so a skipped row would leave the chain pointing at a row that does not exist. Rows already there
--     are filtered out by the SELECT instead.
-- The trigger holds the head row until each batch commits: a running certctl's audited requests wait
-- for a batch (milliseconds) and slip their rows between batches.
--
-- Cost, estimated from this project's measurements (README.md "Measured timings", the verifier's 4-5 µs
-- a row in docs/certctl-findings.md#audit-chain-order), not measured for this file: the transaction
-- (certificates, versions, jobs) about 15 min at 1M certificates; audit rows about 20 µs each on v2.1.7
-- (half an hour for 91M) and 40-80 µs each through main's chain (about a minute per million rows: one
-- to two hours for 91M). Disk at 1M: some 100 GB with the audit rows (seed/growth-notes.md).
--
-- References only the rows of 00_base.sql, through the same psql variables, which it requires:
--   psql -X -q -v ON_ERROR_STOP=1 -v growth_certs=10000 [-v growth_audit=all|service|none] \
--        -v team_id=… -v owner_id=… … -f seed/inventory/01_inventory.sql
-- Not with --single-transaction: on main the audit batches commit themselves. Set-based INSERT … SELECT
-- from generate_series, no per-row loops; ON CONFLICT DO NOTHING (except as said for audit_events)
-- makes a rerun add nothing; raising growth_certs later adds the missing certificates (with
-- a WARNING on main, see above). Without the base rows it stops with a foreign-key error and inserts nothing.
\set ON_ERROR_STOP on

-- inventory_certs is what docker-compose.yml's inventory-seed passes (SEED_INVENTORY). The default lives only
-- here (SEED_INVENTORY has none in the registry). An empty value (an unset variable passed through as
-- -v growth_certs="") means the default too.
\if :{?growth_certs} \else \set growth_certs '' \endif
\if :{?inventory_certs} \else \set inventory_certs '' \endif
SELECT coalesce(nullif(btrim(:'growth_certs'), ''), nullif(btrim(:'inventory_certs'), ''), '10000') AS growth_certs \gset
SELECT :'growth_certs' AS seed_count \gset
-- all: every audit row above; service: without the API middleware's rows; none: no audit rows (a quick
-- large inventory: at 1M certificates the audit rows are most of the time and the disk).
\if :{?growth_audit} \else \set growth_audit '' \endif
SELECT coalesce(nullif(lower(btrim(:'growth_audit')), ''), 'all') AS growth_audit \gset

\set seed_file seed/inventory/01_inventory.sql
\set seed_count_name growth_certs
\set seed_detail ''

-- The fleet's shape (seed/growth-notes.md says why these numbers). Changing one changes the ids' meaning:
-- seed a fresh database after changing any of them.
\set growth_versions 8
\set growth_validity_days 47
\set growth_certs_per_target 10
-- Rotations per committed audit batch on main. Each row's trigger walks every version of the head row the
-- batch has made so far (about 220 here); a commit costs little with synchronous_commit off (below), so
-- small batches win, until the per-statement overhead shows.
\set growth_chain_batch 20

-- main's hash chain is on when its trigger is (a disabled trigger chains nothing): decide by the trigger,
-- not by the prev_hash/row_hash columns.
SELECT EXISTS (SELECT 1 FROM pg_trigger
               WHERE tgrelid = to_regclass('audit_events')
                 AND tgname = 'audit_events_hash_chain_trigger'
                 AND tgenabled <> 'D') AS growth_chain \gset
\set growth_chain_todo false

BEGIN;

\ir ../lib/require_base.sql

SELECT set_config('loadtest.growth_audit', :'growth_audit', true) \gset lt_
DO $mode$
BEGIN
    IF current_setting('loadtest.growth_audit') NOT IN ('all', 'service', 'none') THEN
        RAISE EXCEPTION 'seed/inventory/01_inventory.sql: growth_audit must be all, service or none, got "%"',
            current_setting('loadtest.growth_audit')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$mode$;

-- One reference time for every statement, the audit batches' included, which commit later: all rows share
-- one timeline, and every timestamp stays before the rows certctl writes once it starts.
SELECT now() AS growth_t0,
       :growth_versions::bigint * :'growth_certs'::bigint AS growth_rotations,
       CASE :'growth_audit' WHEN 'all' THEN 13 ELSE 12 END AS growth_probe_event,
       (:'growth_audit' <> 'none' AND :'growth_certs'::bigint > 0 AND NOT :'growth_chain'::boolean) AS growth_audit_here,
       (:'growth_audit' <> 'none' AND :'growth_certs'::bigint > 0 AND :'growth_chain'::boolean) AS growth_audit_chained
\gset

-- Session-local helpers (pg_temp: nothing is added to certctl's schema), so that every table derives ids,
-- serials and times from the same expressions. psql does not interpolate inside $fn$ bodies: all values
-- come in as arguments.

-- 7 digits, more only past 9,999,999 (lpad alone would truncate and collide).
CREATE FUNCTION pg_temp.lt_grow_seq(p_i bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $fn$
    SELECT lpad(p_i::text, greatest(7, length(p_i::text)), '0')
$fn$;

-- When position p_event (0-13, header) of rotation p_g happened. Seconds only (no days in the interval), so
-- daylight-saving changes in the session's time zone cannot bend the schedule. A rotation's events keep
-- their real spacing (scan, job processor, the agent's 30 s polls) while a rotation lasts longer than that,
-- and are squeezed into it otherwise (16 d / 1M certificates = 1.4 s): either way every event of rotation g
-- is after the one before it and before rotation g + 1, the order main's chain needs.
-- Version k of certificate i (g = (k - 1) * n + i) is signed (versions + 1 - k) * days - 31 d
-- + (i - 1) * (days - 31) d / n before t0: so the current versions were signed in the last 16 days and
-- every certificate expires in (now + 31 d, now + 47 d], the steady state of a fleet certctl renews at
-- 31 days before expiry (service/renewal.go:157). Nothing is due at the first scan, whenever certctl
-- starts; certificates then come due at the fleet's own pace (n / 16 a day).
CREATE FUNCTION pg_temp.lt_grow_at(p_t0 timestamptz, p_n bigint, p_versions int, p_days int, p_g bigint, p_event int)
RETURNS timestamptz
LANGUAGE sql STABLE AS $fn$
    SELECT p_t0 + interval '1 second' * (
               86400.0::float8 * (((p_g - 1) / p_n - p_versions) * p_days + 31
                                  + (p_days - 31) * ((p_g - 1) % p_n)::float8 / p_n)
             + least((ARRAY[0, 0.02, 600, 600.01, 615, 631, 631.01, 631.02,
                            661, 661.01, 661.1, 661.11, 662, 662.01]::float8[])[p_event + 1],
                     (p_days - 31) * 86400.0::float8 / p_n * p_event / 14))
$fn$;

-- certctl's local CA writes 40 hex digits of a 159-bit random number (issuer/local/local.go:778): the first
-- digit is 0-7. No index makes serials unique, but a CA's are, and lookups by serial must find one row.
CREATE FUNCTION pg_temp.lt_grow_serial(p_i bigint, p_k bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $fn$
    SELECT translate(left(md5('lt-grow-serial-' || p_i || '-' || p_k || '-a'), 1), '89abcdef', '01234567')
           || substr(md5('lt-grow-serial-' || p_i || '-' || p_k || '-a'), 2)
           || left(md5('lt-grow-serial-' || p_i || '-' || p_k || '-b'), 8)
$fn$;

CREATE FUNCTION pg_temp.lt_grow_audit_id(p_i bigint, p_k bigint, p_event int) RETURNS text
LANGUAGE sql IMMUTABLE AS $fn$
    SELECT 'lt-grow-audit-' || pg_temp.lt_grow_seq(p_i) || '-' || lpad(p_k::text, 2, '0') || '-' || lpad(p_event::text, 2, '0')
$fn$;

-- 1,024 lines of 64 base64 characters from md5, built once per statement (an immutable call without
-- arguments is folded into the plan). A version's PEM is a window of it: as long as a real one and as
-- incompressible, so PostgreSQL moves pem_chain out of line into TOAST exactly as it does for real
-- certificates, and the version rows and their sequential scans (lookups by serial,
-- docs/certctl-findings.md#serial-no-index) are as wide as in a real fleet. Placeholders only: the base64
-- decodes to no certificate; nothing certctl does with a version it did not just sign parses it.
CREATE FUNCTION pg_temp.lt_grow_pem_pool() RETURNS bytea
LANGUAGE sql IMMUTABLE AS $fn$
    SELECT convert_to(string_agg(encode(decode(md5('lt-grow-pem-' || j || '-a') || md5('lt-grow-pem-' || j || '-b')
                                               || md5('lt-grow-pem-' || j || '-c'), 'hex'), 'base64') || chr(10),
                                 '' ORDER BY j), 'UTF8')
    FROM generate_series(0, 1023) AS j
$fn$;

-- The issuing CA's certificate, the same in every chain as it is in a real one (an EC P-256 CA: 510 bytes).
-- Lines 0-10 of the pool, which no leaf window uses, so no pem_chain repeats itself and compresses.
CREATE FUNCTION pg_temp.lt_grow_pem_ca() RETURNS text
LANGUAGE sql IMMUTABLE AS $fn$
    SELECT '-----BEGIN CERTIFICATE-----' || chr(10)
           || convert_from(substring(pg_temp.lt_grow_pem_pool() FROM 1 FOR 690), 'UTF8')
           || chr(10) || '-----END CERTIFICATE-----' || chr(10)
$fn$;

-- The audit rows of rotations p_lo..p_hi (header table), in the order of g then position. With
-- p_only_missing, a rotation whose last row (for the mode) is already there is left out, so a rerun
-- generates nothing; the caller still guards against single rows already present.
CREATE FUNCTION pg_temp.lt_grow_audit_rows(
    p_n bigint, p_versions int, p_days int, p_per_target int, p_t0 timestamptz,
    p_lo bigint, p_hi bigint, p_mode text, p_only_missing boolean)
RETURNS TABLE (id text, actor text, actor_type text, action text, resource_type text,
               resource_id text, details jsonb, ts timestamptz, event_category text)
LANGUAGE sql STABLE AS $fn$
    SELECT pg_temp.lt_grow_audit_id(r.i, r.k, e.p),
           CASE e.who WHEN 'system' THEN 'system' WHEN 'agent' THEN c.agent_id
                      WHEN 'operator' THEN 'loadtest' ELSE 'loadtest-grow-agent' END,
           e.actor_type,
           e.action,
           CASE WHEN e.method IS NOT NULL THEN 'api' WHEN e.p IN (8, 12) THEN 'job' ELSE 'certificate' END,
           CASE WHEN e.method IS NOT NULL THEN ap.path WHEN e.p IN (8, 12) THEN c.deploy_job ELSE c.cert_id END,
           CASE e.p
               WHEN 0 THEN jsonb_build_object('common_name', 'loadtest-grow-' || s.seq || '.loadtest.example.com')
               WHEN 2 THEN jsonb_build_object('threshold_days', 30, 'days_until_expiry', 30, 'channel', 'Email',
                                              'severity_tier', 'informational')
               WHEN 3 THEN jsonb_build_object('days_until_expiry', 30 + (r.i % 1000) / 1000.0, 'job_id', c.renewal_job)
               WHEN 4 THEN jsonb_build_object('job_id', c.renewal_job, 'keygen_mode', 'agent')
               WHEN 5 THEN jsonb_build_object('job_id', c.renewal_job,
                                              'serial', pg_temp.lt_grow_serial(r.i, r.k),
                                              'not_after', to_char((date_trunc('second', pg_temp.lt_grow_at(p_t0, p_n, p_versions, p_days, g, 5))
                                                                    + interval '1 second' * (p_days * 86400)) AT TIME ZONE 'UTC',
                                                                   'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                                              'keygen_mode', 'agent')
               WHEN 6 THEN jsonb_build_object('agent_hostname', 'loadtest-grow-agent-' || s.agent_seq || '.loadtest.example.com',
                                              'keygen_mode', 'agent', 'job_id', c.renewal_job)
               WHEN 8 THEN jsonb_build_object('status', 'Running', 'error', '')
               WHEN 10 THEN jsonb_build_object('version', pg_temp.lt_grow_serial(r.i, r.k))
               WHEN 12 THEN jsonb_build_object('status', 'Completed', 'error', '')
               -- the middleware's rows: a SHA-256 of the request body (none for a GET)
               ELSE jsonb_build_object('method', e.method, 'path', ap.path,
                                       'body_hash', CASE e.method WHEN 'GET' THEN ''
                                                    ELSE md5('lt-grow-body-' || r.i || '-' || r.k || '-' || e.p)
                                                         || md5('lt-grow-body-' || r.i || '-' || r.k || '-' || e.p || '-2') END,
                                       'status', e.http_status, 'latency_ms', e.latency_ms)
           END,
           pg_temp.lt_grow_at(p_t0, p_n, p_versions, p_days, g, e.p),
           'cert_lifecycle'
    FROM generate_series(p_lo, p_hi) AS g
    CROSS JOIN LATERAL (SELECT (g - 1) / p_n + 1 AS k, (g - 1) % p_n + 1 AS i) AS r
    CROSS JOIN LATERAL (SELECT pg_temp.lt_grow_seq(r.i) AS seq,
                               pg_temp.lt_grow_seq((r.i + p_per_target - 1) / p_per_target) AS agent_seq,
                               lpad(r.k::text, 2, '0') AS kk) AS s
    CROSS JOIN LATERAL (SELECT 'lt-grow-' || s.seq AS cert_id,
                               'lt-grow-agent-' || s.agent_seq AS agent_id,
                               'lt-grow-job-' || s.seq || '-' || s.kk || '-renewal' AS renewal_job,
                               'lt-grow-job-' || s.seq || '-' || s.kk || '-deploy' AS deploy_job) AS c
    CROSS JOIN (VALUES
        (0,  'certificate_created',   'operator', 'User',   NULL::text, NULL::int, NULL::int),
        (1,  'api_post',              'operator', 'User',   'POST',     201,       12),
        (2,  'expiration_alert_sent', 'system',   'System', NULL,       NULL,      NULL),
        (3,  'renewal_job_created',   'system',   'System', NULL,       NULL,      NULL),
        (4,  'renewal_awaiting_csr',  'system',   'System', NULL,       NULL,      NULL),
        (5,  'renewal_job_completed', 'system',   'System', NULL,       NULL,      NULL),
        (6,  'csr_submitted',         'agent',    'Agent',  NULL,       NULL,      NULL),
        (7,  'api_post',              'agentkey', 'User',   'POST',     202,       38),
        (8,  'job_status_reported',   'agent',    'Agent',  NULL,       NULL,      NULL),
        (9,  'api_post',              'agentkey', 'User',   'POST',     200,       4),
        (10, 'certificate_retrieved', 'agent',    'Agent',  NULL,       NULL,      NULL),
        (11, 'api_get',               'agentkey', 'User',   'GET',      200,       5),
        (12, 'job_status_reported',   'agent',    'Agent',  NULL,       NULL,      NULL),
        (13, 'api_post',              'agentkey', 'User',   'POST',     200,       4)
    ) AS e(p, action, who, actor_type, method, http_status, latency_ms)
    CROSS JOIN LATERAL (SELECT CASE e.p
                                   WHEN 1 THEN '/api/v1/certificates'
                                   WHEN 7 THEN '/api/v1/agents/' || c.agent_id || '/csr'
                                   WHEN 11 THEN '/api/v1/agents/' || c.agent_id || '/certificates/' || c.cert_id
                                   ELSE '/api/v1/agents/' || c.agent_id || '/jobs/' || c.deploy_job || '/status'
                               END AS path) AS ap
    WHERE (r.k = 1 OR e.p >= 3)
      AND (p_mode = 'all' OR e.method IS NULL)
      AND (NOT p_only_missing OR NOT EXISTS (
              SELECT 1 FROM audit_events AS x
              WHERE x.id = pg_temp.lt_grow_audit_id(r.i, r.k, CASE p_mode WHEN 'all' THEN 13 ELSE 12 END)))
$fn$;

-- main only, before anything is inserted: where the missing audit history starts (a rerun: nowhere; a
-- resumed run: after the batches already committed), and whether anything in audit_events is dated after
-- that point, in which case the chain cannot verify whatever the order (header).
\if :growth_audit_chained
SELECT coalesce(min(g), 0) AS growth_g0, min(g) IS NOT NULL AS growth_chain_todo
FROM generate_series(1, :growth_rotations) AS g
CROSS JOIN LATERAL (SELECT (g - 1) / :growth_certs + 1 AS k, (g - 1) % :growth_certs + 1 AS i) AS r
WHERE NOT EXISTS (SELECT 1 FROM audit_events AS a
                  WHERE a.id = pg_temp.lt_grow_audit_id(r.i, r.k, :growth_probe_event))
\gset
\if :growth_chain_todo
SELECT set_config('loadtest.growth_chain_from',
                  pg_temp.lt_grow_at(:'growth_t0', :growth_certs, :growth_versions, :growth_validity_days, :growth_g0, 0)::text,
                  true) \gset lt_
DO $chain$
DECLARE
    later record;
BEGIN
    SELECT a.id, a.timestamp AS ts INTO later
    FROM audit_events AS a
    WHERE a.timestamp >= current_setting('loadtest.growth_chain_from')::timestamptz
    ORDER BY a.timestamp DESC, a.id DESC
    LIMIT 1;
    IF FOUND THEN
        RAISE WARNING 'seed/inventory/01_inventory.sql: audit_events already holds rows dated after % (the latest: % at %), where this fleet''s audit history starts: certctl''s hash chain will not verify',
            current_setting('loadtest.growth_chain_from'), later.id, later.ts
            USING DETAIL = 'This build chains audit_events in insert order (migration 000047) and audit_events_verify_chain() walks it by timestamp: the seeded rows, older than those but chained after them, break it at the first seeded row, where the verifier stops.',
                  HINT = 'For a chain that verifies, seed a fresh database after certctl-migrate and before certctl first starts.';
    END IF;
END
$chain$;
\endif
\endif

-- Offline with a heartbeat 5 minutes old: what certctl's health check (every 2 min) makes of agents nobody
-- runs, so it has nothing to update at boot. Each agent is the host of certificates (a - 1) * 10 + 1 …,
-- registered an hour before the first of them was created.
INSERT INTO agents (
    id, name, hostname, status, last_heartbeat_at, registered_at, api_key_hash,
    os, architecture, ip_address, version)
SELECT 'lt-grow-agent-' || s.seq,
       'loadtest-grow-agent-' || s.seq,
       'loadtest-grow-agent-' || s.seq || '.loadtest.example.com',
       'Offline',
       :'growth_t0'::timestamptz - interval '5 minutes',
       pg_temp.lt_grow_at(:'growth_t0', :growth_certs, :growth_versions, :growth_validity_days,
                          (a - 1)::bigint * :growth_certs_per_target + 1, 0) - interval '1 hour',
       -- NOT NULL; never the SHA-256 hex of a key, so no key authenticates as these agents
       'loadtest-unused',
       'linux', 'amd64',
       -- text only, apart from 02_agent_fleet.sql's 10.0.x.y; nothing dials it
       '10.' || (128 + ((a >> 16) & 127)) || '.' || ((a >> 8) & 255) || '.' || (a & 255),
       'loadtest'
FROM generate_series(1, (:growth_certs + :growth_certs_per_target - 1) / :growth_certs_per_target) AS a
CROSS JOIN LATERAL (SELECT pg_temp.lt_grow_seq(a) AS seq) AS s
ON CONFLICT DO NOTHING;

-- certctl stores a target's config with every field whose name holds "key" replaced by ********
-- (docs/certctl-findings.md#target-secrets-redacted) and the real one encrypted under the server's key,
-- which a seed cannot produce: encrypted_config stays NULL. No host or port, so the agent verifies nothing.
INSERT INTO deployment_targets (id, name, type, agent_id, config, created_at, updated_at)
SELECT 'lt-grow-target-' || s.seq,
       'loadtest-grow-target-' || s.seq,
       'NGINX',
       'lt-grow-agent-' || s.seq,
       jsonb_build_object('cert_path', '/etc/loadtest-grow/' || s.seq || '/cert.pem',
                          'key_path', '********',
                          'chain_path', '/etc/loadtest-grow/' || s.seq || '/chain.pem',
                          'reload_command', 'nginx -s reload',
                          'validate_command', 'nginx -t'),
       t.created, t.created
FROM generate_series(1, (:growth_certs + :growth_certs_per_target - 1) / :growth_certs_per_target) AS a
CROSS JOIN LATERAL (SELECT pg_temp.lt_grow_seq(a) AS seq) AS s
CROSS JOIN LATERAL (SELECT pg_temp.lt_grow_at(:'growth_t0', :growth_certs, :growth_versions, :growth_validity_days,
                                              (a - 1)::bigint * :growth_certs_per_target + 1, 0)
                           - interval '59 minutes' AS created) AS t
ON CONFLICT DO NOTHING;

-- expires_at is the last version's not_after, as certctl sets it on signing (renewal.go:786);
-- last_renewal_at and updated_at the time it was signed; last_deployment_at stays NULL (nothing in certctl
-- sets it). created_at strictly increases with the name, so certctl's list (ORDER BY created_at, no
-- tie-break) pages stably and in name order.
INSERT INTO managed_certificates (
    id, name, common_name, sans, environment,
    owner_id, team_id, issuer_id, renewal_policy_id, certificate_profile_id,
    status, expires_at, tags, source, last_renewal_at, created_at, updated_at)
SELECT 'lt-grow-' || s.seq,
       'loadtest-grow-' || s.seq,
       s.cn,
       ARRAY[s.cn],
       'loadtest',
       :'owner_id', :'team_id', :'issuer_id', :'policy_id', :'profile_id',
       'Active',
       date_trunc('second', t.renewed_at) + interval '1 second' * (:growth_validity_days * 86400),
       '{"harness": "certctl-loadtest", "fixture": "growth"}'::jsonb,
       '',
       t.renewed_at,
       t.created_at,
       t.renewed_at
FROM generate_series(1, :growth_certs) AS i
CROSS JOIN LATERAL (SELECT pg_temp.lt_grow_seq(i) AS seq) AS q
CROSS JOIN LATERAL (SELECT q.seq, 'loadtest-grow-' || q.seq || '.loadtest.example.com' AS cn) AS s
CROSS JOIN LATERAL (SELECT pg_temp.lt_grow_at(:'growth_t0', :growth_certs, :growth_versions, :growth_validity_days, i, 0) AS created_at,
                           pg_temp.lt_grow_at(:'growth_t0', :growth_certs, :growth_versions, :growth_validity_days,
                                              (:growth_versions - 1)::bigint * :growth_certs + i, 5) AS renewed_at) AS t
ON CONFLICT DO NOTHING;

INSERT INTO certificate_target_mappings (certificate_id, target_id)
SELECT 'lt-grow-' || pg_temp.lt_grow_seq(i),
       'lt-grow-target-' || pg_temp.lt_grow_seq((i + :growth_certs_per_target - 1) / :growth_certs_per_target)
FROM generate_series(1, :growth_certs) AS i
ON CONFLICT DO NOTHING;

-- In the order of the fleet's schedule, as certctl would have appended them. What certctl stores for an
-- agent's CSR (renewal.go:762-776): the leaf and the issuing CA joined by a blank line (CertPEM + "\n" +
-- ChainPEM), the agent's ECDSA P-256 CSR (cmd/agent/poll.go:130), its key algorithm and size. not_before is
-- the signing time to the second, as in an X.509 certificate.
INSERT INTO certificate_versions (
    id, certificate_id, serial_number, not_before, not_after,
    fingerprint_sha256, pem_chain, csr_pem, key_algorithm, key_size, created_at)
SELECT 'lt-grow-ver-' || s.seq || '-' || s.kk,
       'lt-grow-' || s.seq,
       pg_temp.lt_grow_serial(r.i, r.k),
       t.not_before,
       t.not_before + interval '1 second' * (:growth_validity_days * 86400),
       -- UNIQUE (migration 000001): 64 hex digits that cannot repeat in practice
       md5('lt-grow-fingerprint-' || r.i || '-' || r.k || '-a') || md5('lt-grow-fingerprint-' || r.i || '-' || r.k || '-b'),
       -- a leaf of 609 bytes (12 lines and 44 characters of base64), then the CA
       '-----BEGIN CERTIFICATE-----' || E'\n'
           || convert_from(substring(pg_temp.lt_grow_pem_pool() FROM (1 + 65 * (16 + g::bigint * 7919 % 995))::int FOR 824), 'UTF8')
           || E'\n-----END CERTIFICATE-----\n\n' || pg_temp.lt_grow_pem_ca(),
       -- a CSR of 264 bytes
       '-----BEGIN CERTIFICATE REQUEST-----' || E'\n'
           || convert_from(substring(pg_temp.lt_grow_pem_pool() FROM (1 + 65 * (g::bigint * 104729 % 1018))::int FOR 357), 'UTF8')
           || E'\n-----END CERTIFICATE REQUEST-----\n',
       'ECDSA',
       256,
       t.signed_at
FROM generate_series(1, :growth_rotations) AS g
CROSS JOIN LATERAL (SELECT (g - 1) / :growth_certs + 1 AS k, (g - 1) % :growth_certs + 1 AS i) AS r
CROSS JOIN LATERAL (SELECT pg_temp.lt_grow_seq(r.i) AS seq, lpad(r.k::text, 2, '0') AS kk) AS s
CROSS JOIN LATERAL (SELECT pg_temp.lt_grow_at(:'growth_t0', :growth_certs, :growth_versions, :growth_validity_days, g, 5) AS signed_at) AS u
CROSS JOIN LATERAL (SELECT u.signed_at, date_trunc('second', u.signed_at) AS not_before) AS t
ON CONFLICT DO NOTHING;

-- Every status change of a job goes through UPDATE jobs SET status, last_error (repository/postgres/job.go:226),
-- so a finished job of certctl's keeps attempts 0, started_at and completed_at NULL and verification_status
-- 'pending' (docs/certctl-findings.md#job-times-unset): so do these. scheduled_at is always set: certctl
-- scans it into a plain time.Time (job.go:697) and one NULL fails the whole job listing with a 500.
INSERT INTO jobs (
    id, type, certificate_id, target_id, agent_id, status, attempts, max_attempts, scheduled_at, created_at)
SELECT 'lt-grow-job-' || s.seq || '-' || s.kk || '-' || j.suffix,
       j.type,
       'lt-grow-' || s.seq,
       CASE j.type WHEN 'Deployment' THEN 'lt-grow-target-' || s.agent_seq END,
       CASE j.type WHEN 'Deployment' THEN 'lt-grow-agent-' || s.agent_seq END,
       'Completed',
       0,
       3,
       j.happened,
       j.happened
FROM generate_series(1, :growth_rotations) AS g
CROSS JOIN LATERAL (SELECT (g - 1) / :growth_certs + 1 AS k, (g - 1) % :growth_certs + 1 AS i) AS r
CROSS JOIN LATERAL (SELECT pg_temp.lt_grow_seq(r.i) AS seq,
                           pg_temp.lt_grow_seq((r.i + :growth_certs_per_target - 1) / :growth_certs_per_target) AS agent_seq,
                           lpad(r.k::text, 2, '0') AS kk) AS s
-- the renewal job when the scan created it (position 3), the deployment job when the CSR was signed (5)
CROSS JOIN LATERAL (VALUES
    ('renewal', 'Renewal', pg_temp.lt_grow_at(:'growth_t0', :growth_certs, :growth_versions, :growth_validity_days, g, 3)),
    ('deploy', 'Deployment', pg_temp.lt_grow_at(:'growth_t0', :growth_certs, :growth_versions, :growth_validity_days, g, 5))
) AS j(suffix, type, happened)
ON CONFLICT DO NOTHING;

-- v2.1.7: no chain, so the audit rows join this transaction like everything else, in the schedule's order
-- as generated (nothing depends on it there). ON CONFLICT is safe without main's trigger.
\if :growth_audit_here
INSERT INTO audit_events (
    id, actor, actor_type, action, resource_type, resource_id, details, timestamp, event_category)
SELECT r.id, r.actor, r.actor_type, r.action, r.resource_type, r.resource_id, r.details, r.ts, r.event_category
FROM pg_temp.lt_grow_audit_rows(:growth_certs, :growth_versions, :growth_validity_days, :growth_certs_per_target,
                                :'growth_t0', 1, :growth_rotations, :'growth_audit', true) AS r
ON CONFLICT DO NOTHING;
ANALYZE audit_events;
\endif

-- Fresh statistics before certctl plans its first query against the new rows.
ANALYZE agents;
ANALYZE deployment_targets;
ANALYZE managed_certificates;
ANALYZE certificate_target_mappings;
ANALYZE certificate_versions;
ANALYZE jobs;

COMMIT;

-- main: the audit history through the chain trigger, batch by batch from the first missing rotation, each
-- batch sorted by (timestamp, id) and committed before the next takes the head row again. Rows already
-- there (a larger fleet seeded before, another growth_audit) are filtered out, never skipped with ON
-- CONFLICT (header). A batch lost to a crash is only a batch to redo: synchronous commit buys nothing here.
\if :growth_audit_chained
\if :growth_chain_todo
SET synchronous_commit = off;
SELECT set_config('loadtest.growth_certs', :'growth_certs', false),
       set_config('loadtest.growth_versions', :'growth_versions', false),
       set_config('loadtest.growth_validity_days', :'growth_validity_days', false),
       set_config('loadtest.growth_certs_per_target', :'growth_certs_per_target', false),
       set_config('loadtest.growth_t0', :'growth_t0', false),
       set_config('loadtest.growth_g0', :'growth_g0', false),
       set_config('loadtest.growth_rotations', :'growth_rotations', false),
       set_config('loadtest.growth_chain_batch', :'growth_chain_batch', false),
       set_config('loadtest.growth_audit', :'growth_audit', false) \gset lt_
DO $batches$
DECLARE
    v_n bigint := current_setting('loadtest.growth_certs')::bigint;
    v_versions int := current_setting('loadtest.growth_versions')::int;
    v_days int := current_setting('loadtest.growth_validity_days')::int;
    v_per_target int := current_setting('loadtest.growth_certs_per_target')::int;
    v_t0 timestamptz := current_setting('loadtest.growth_t0')::timestamptz;
    v_last bigint := current_setting('loadtest.growth_rotations')::bigint;
    v_step bigint := current_setting('loadtest.growth_chain_batch')::bigint;
    v_mode text := current_setting('loadtest.growth_audit');
    v_lo bigint;
BEGIN
    FOR v_lo IN SELECT generate_series(current_setting('loadtest.growth_g0')::bigint, v_last, v_step) LOOP
        INSERT INTO audit_events (
            id, actor, actor_type, action, resource_type, resource_id, details, timestamp, event_category)
        SELECT r.id, r.actor, r.actor_type, r.action, r.resource_type, r.resource_id, r.details, r.ts, r.event_category
        FROM pg_temp.lt_grow_audit_rows(v_n, v_versions, v_days, v_per_target, v_t0,
                                        v_lo, least(v_lo + v_step - 1, v_last), v_mode, true) AS r
        WHERE NOT EXISTS (SELECT 1 FROM audit_events AS x WHERE x.id = r.id)
        ORDER BY r.ts, r.id;
        COMMIT;
    END LOOP;
END
$batches$;
RESET synchronous_commit;
ANALYZE audit_events;
\endif
\endif
