-- Bulk-renewal fixture: :bulk_certs managed certificates (default 10,000), all `Active`, expiring evenly
-- over the next 30 days, so every one of them is inside the base renewal policy's 30-day window.
--
--   id      lt-bulk-0000001 …           name  loadtest-bulk-0000001 … (zero-padded: names sort)
--   common_name / sans[0]  loadtest-bulk-0000001.loadtest.example.com
--   environment `loadtest`, tags {"harness":"certctl-loadtest","fixture":"bulk-renewal"}, source ''
--   expires_at  now() + 30 days * seq / bulk_certs   -> in (now, now + 30 days], the last one at +30 d
--   created_at  now() - (bulk_certs - seq) µs       -> distinct and in name order, so certctl's list
--                                                      (ORDER BY created_at, no tie-break) pages stably
-- References only the rows of 00_base.sql, through the same psql variables, which it requires (their
-- defaults are the LT_*_ID knobs; docker-compose.yml passes them). Run after 00_base.sql:
--   psql -X -q -v ON_ERROR_STOP=1 -v bulk_certs=10000 -v team_id=… -v owner_id=… … -f seed/01_bulk_renewal_certs.sql
-- One set-based INSERT … SELECT in one transaction; ON CONFLICT DO NOTHING makes a rerun add nothing.
-- Without the base rows it stops with a foreign-key error and inserts nothing. See seed/README.md.
\set ON_ERROR_STOP on

-- SEED_BULK_CERTS's default (internal/harness/knobs.go; test/seed checks they agree). An empty value
-- (an unset SEED_BULK_CERTS passed through as -v bulk_certs="") means the default too.
\if :{?bulk_certs} \else \set bulk_certs '' \endif
SELECT coalesce(nullif(btrim(:'bulk_certs'), ''), '10000') AS bulk_certs \gset
SELECT :'bulk_certs' AS seed_count \gset

\set seed_file seed/01_bulk_renewal_certs.sql
\set seed_count_name bulk_certs
\set seed_detail ''

BEGIN;

\ir lib/require_base.sql

INSERT INTO managed_certificates (
    id, name, common_name, sans, environment,
    owner_id, team_id, issuer_id, renewal_policy_id, certificate_profile_id,
    status, expires_at, tags, source, created_at, updated_at)
SELECT 'lt-bulk-' || seq,
       'loadtest-bulk-' || seq,
       'loadtest-bulk-' || seq || '.loadtest.example.com',
       ARRAY['loadtest-bulk-' || seq || '.loadtest.example.com'],
       'loadtest',
       :'owner_id', :'team_id', :'issuer_id', :'policy_id', :'profile_id',
       'Active',
       now() + interval '30 days' * i / n,
       '{"harness": "certctl-loadtest", "fixture": "bulk-renewal"}'::jsonb,
       '',
       now() - interval '1 microsecond' * (n - i),
       now()
FROM (SELECT :'bulk_certs'::integer AS n) AS knob
CROSS JOIN LATERAL generate_series(1, knob.n) AS i
-- 7 digits, more only past 9,999,999 (lpad alone would truncate and collide).
CROSS JOIN LATERAL (SELECT lpad(i::text, greatest(7, length(i::text)), '0') AS seq) AS s
ON CONFLICT DO NOTHING;

-- Fresh statistics before certctl plans its first query against the new rows.
ANALYZE managed_certificates;

COMMIT;
