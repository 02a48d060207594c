-- Included (\ir) by 01_bulk_renewal_certs.sql and 02_agent_fleet.sql inside their transaction, before
-- they insert: stops with the remedy in the message when the row count is not a number, an id variable
-- is missing, or 00_base.sql has not written the base rows (the INSERT's own foreign keys would stop it
-- too, but one missing row at a time). Not a seed itself: the scale seeder applies only seed/*.sql.
--
-- The including file sets these psql variables first:
--   seed_file   its own name, for the messages          seed_count_name, seed_count   e.g. bulk_certs, 10000
--   seed_detail a DETAIL line for the foreign-key error, or ''
-- and is given the ids of the base rows as docker-compose.yml passes them (-v team_id=… …; their
-- defaults are the LT_*_ID knobs in internal/harness/knobs.go). An id not given is reported, not guessed.

\if :{?team_id} \else \set team_id '' \endif
\if :{?owner_id} \else \set owner_id '' \endif
\if :{?policy_id} \else \set policy_id '' \endif
\if :{?issuer_id} \else \set issuer_id '' \endif
\if :{?profile_id} \else \set profile_id '' \endif

-- Hand the variables to the guard below (psql does not interpolate inside a DO body).
SELECT set_config('loadtest.seed_file', :'seed_file', true),
       set_config('loadtest.count_name', :'seed_count_name', true),
       set_config('loadtest.count', :'seed_count', true),
       set_config('loadtest.detail', :'seed_detail', true),
       set_config('loadtest.team_id', :'team_id', true),
       set_config('loadtest.owner_id', :'owner_id', true),
       set_config('loadtest.policy_id', :'policy_id', true),
       set_config('loadtest.issuer_id', :'issuer_id', true),
       set_config('loadtest.profile_id', :'profile_id', true) \gset lt_

DO $guard$
DECLARE
    file text := current_setting('loadtest.seed_file');
    unset text;
    missing text;
BEGIN
    IF current_setting('loadtest.count') !~ '^\s*[0-9]{1,9}\s*$' THEN
        RAISE EXCEPTION '%: % must be a non-negative integer, got "%"',
            file, current_setting('loadtest.count_name'), current_setting('loadtest.count')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT string_agg(v, ', ' ORDER BY n) INTO unset
    FROM (VALUES (1, 'team_id'), (2, 'owner_id'), (3, 'policy_id'), (4, 'issuer_id'), (5, 'profile_id')) AS ids(n, v)
    WHERE current_setting('loadtest.' || v) = '';
    IF unset IS NOT NULL THEN
        RAISE EXCEPTION '%: no value for the psql variable(s) %', file, unset
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass the ids 00_base.sql was run with: -v team_id=… -v owner_id=… -v policy_id=… -v issuer_id=… -v profile_id=… (docker-compose.yml passes LT_TEAM_ID … LT_PROFILE_ID).';
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
    IF missing IS NOT NULL AND current_setting('loadtest.detail') = '' THEN
        RAISE EXCEPTION '%: foreign key check failed, base rows missing: %', file, missing
            USING ERRCODE = 'foreign_key_violation',
                  HINT = 'Run seed/00_base.sql first, with the same -v team_id/owner_id/policy_id/issuer_id/profile_id values.';
    ELSIF missing IS NOT NULL THEN
        RAISE EXCEPTION '%: foreign key check failed, base rows missing: %', file, missing
            USING ERRCODE = 'foreign_key_violation',
                  DETAIL = current_setting('loadtest.detail'),
                  HINT = 'Run seed/00_base.sql first, with the same -v team_id/owner_id/policy_id/issuer_id/profile_id values.';
    END IF;
END
$guard$;
