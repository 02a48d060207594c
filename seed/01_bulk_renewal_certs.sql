-- Bulk-renewal fixture: :bulk_certs managed certificates (default 10,000), all `Active`, expiring evenly
-- over the next 30 days, so every one of them is inside the base renewal policy's 30-day window.
--
--   id      lt-bulk-0000001 …           name  loadtest-bulk-0000001 … (zero-padded: names sort)
--   common_name / sans[0]  loadtest-bulk-0000001.loadtest.example.com
--   environment `loadtest`, tags {"harness":"certctl-loadtest","fixture":"bulk-renewal"}, source ''
--   expires_at  now() + 30 days * seq / bulk_certs   -> in (now, now + 30 days], the last one at +30 d
--   created_at  now() - (bulk_certs - seq) µs       -> distinct and in name order, so certctl's list
--                                                      (ORDER BY created_at, no tie-break) pages stably
-- References only the rows of 00_base.sql, through the same psql variables (and the same lt-* defaults
-- as docker-compose.yml). Run after 00_base.sql:
--   psql -X -q -v ON_ERROR_STOP=1 -v bulk_certs=10000 -v team_id=lt-team … -f seed/01_bulk_renewal_certs.sql
-- One set-based INSERT … SELECT in one transaction; ON CONFLICT DO NOTHING makes a rerun add nothing.
-- Without the base rows it stops with a foreign-key error and inserts nothing. See seed/README.md.
\set ON_ERROR_STOP on

\if :{?bulk_certs} \else \set bulk_certs 10000 \endif
\if :{?team_id} \else \set team_id lt-team \endif
\if :{?owner_id} \else \set owner_id lt-owner \endif
\if :{?policy_id} \else \set policy_id lt-policy \endif
\if :{?issuer_id} \else \set issuer_id lt-issuer-local \endif
\if :{?profile_id} \else \set profile_id lt-profile \endif
-- An empty value (an unset SEED_BULK_CERTS passed through as -v bulk_certs="") means the default too.
SELECT coalesce(nullif(btrim(:'bulk_certs'), ''), '10000') AS bulk_certs \gset

BEGIN;

-- Hand the variables to the guard below (psql does not interpolate inside a DO body).
SELECT set_config('loadtest.bulk_certs', :'bulk_certs', true),
       set_config('loadtest.team_id', :'team_id', true),
       set_config('loadtest.owner_id', :'owner_id', true),
       set_config('loadtest.policy_id', :'policy_id', true),
       set_config('loadtest.issuer_id', :'issuer_id', true),
       set_config('loadtest.profile_id', :'profile_id', true) \gset lt_

-- Fail early, with the remedy in the message, when the count is not a number or 00_base.sql has not
-- run. The INSERT's own foreign keys would stop it too, one missing row at a time.
DO $guard$
DECLARE
    missing text;
BEGIN
    IF current_setting('loadtest.bulk_certs') !~ '^\s*[0-9]{1,9}\s*$' THEN
        RAISE EXCEPTION 'seed/01_bulk_renewal_certs.sql: bulk_certs must be a non-negative integer, got "%"',
            current_setting('loadtest.bulk_certs')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT string_agg(format('%s.id = %L', tbl, id), ', ') INTO missing
    FROM (
        SELECT 'teams', current_setting('loadtest.team_id')
        WHERE NOT EXISTS (SELECT 1 FROM teams WHERE id = current_setting('loadtest.team_id'))
        UNION ALL
        SELECT 'owners', current_setting('loadtest.owner_id')
        WHERE NOT EXISTS (SELECT 1 FROM owners WHERE id = current_setting('loadtest.owner_id'))
        UNION ALL
        SELECT 'renewal_policies', current_setting('loadtest.policy_id')
        WHERE NOT EXISTS (SELECT 1 FROM renewal_policies WHERE id = current_setting('loadtest.policy_id'))
        UNION ALL
        SELECT 'issuers', current_setting('loadtest.issuer_id')
        WHERE NOT EXISTS (SELECT 1 FROM issuers WHERE id = current_setting('loadtest.issuer_id'))
        UNION ALL
        SELECT 'certificate_profiles', current_setting('loadtest.profile_id')
        WHERE NOT EXISTS (SELECT 1 FROM certificate_profiles WHERE id = current_setting('loadtest.profile_id'))
    ) AS absent(tbl, id);
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'seed/01_bulk_renewal_certs.sql: foreign key check failed, base rows missing: %', missing
            USING ERRCODE = 'foreign_key_violation',
                  HINT = 'Run seed/00_base.sql first, with the same -v team_id/owner_id/policy_id/issuer_id/profile_id values.';
    END IF;
END
$guard$;

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
