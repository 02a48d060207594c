-- A deliberately broken fixture, used by TestSeed/BrokenFixtureFails to show that the seed tests can
-- fail on certctl's real schema: one good agent, then one certificate whose owner does not exist. Unlike
-- seed/01_bulk_renewal_certs.sql it has no guard of its own, so certctl's foreign key
-- managed_certificates_owner_id_fkey stops it and the transaction rolls the agent back too. Run after
-- seed/00_base.sql, with the same psql variables.
\set ON_ERROR_STOP on

BEGIN;

INSERT INTO agents (id, name, hostname, status, last_heartbeat_at, registered_at, api_key_hash,
                    os, architecture, ip_address, version)
VALUES ('lt-broken-agent', 'loadtest-broken-agent', 'loadtest-broken-agent.loadtest.example.com', 'Online',
        now(), now() - interval '1 minute', 'loadtest-unused', 'linux', 'amd64', '10.255.255.255', 'loadtest');

INSERT INTO managed_certificates (
    id, name, common_name, sans, environment,
    owner_id, team_id, issuer_id, renewal_policy_id, certificate_profile_id,
    status, expires_at, tags, source)
VALUES ('lt-broken-0000001', 'loadtest-broken-0000001', 'loadtest-broken-0000001.loadtest.example.com',
        ARRAY['loadtest-broken-0000001.loadtest.example.com'], 'loadtest',
        'lt-missing-owner', :'team_id', :'issuer_id', :'policy_id', :'profile_id',
        'Active', now() + interval '30 days', '{"harness": "certctl-loadtest"}'::jsonb, '');

COMMIT;
