-- Base rows every scenario references: one team, owner, renewal policy, local issuer and certificate
-- profile. Ids come from psql variables (set from the x-seed-ids block of docker-compose.yml) and carry
-- an `lt-` prefix so they never collide with an operator's data. No network-scan targets, no other
-- issuer: certctl dials whatever is enabled (docs/certctl-findings.md#demo-seed-scan). Idempotent.
BEGIN;

INSERT INTO teams (id, name, description)
VALUES (:'team_id', 'certctl-loadtest', 'load-test harness rows')
ON CONFLICT DO NOTHING;

INSERT INTO owners (id, name, email, team_id)
VALUES (:'owner_id', 'certctl-loadtest', 'loadtest@example.com', :'team_id')
ON CONFLICT DO NOTHING;

INSERT INTO renewal_policies (id, name, renewal_window_days, auto_renew)
VALUES (:'policy_id', 'certctl-loadtest 30-day', 30, true)
ON CONFLICT DO NOTHING;

-- GenericCA in its sub-CA mode: it signs with the intermediate fixtures/tls-init.sh issued under the
-- stack's CA, so what it issues chains to /tls/ca.crt (without a path certctl makes up a CA at every
-- start: docs/certctl-findings.md#local-ca-ephemeral). The server reads the files at boot.
INSERT INTO issuers (id, name, type, config, enabled)
VALUES (:'issuer_id', 'certctl-loadtest local CA', 'GenericCA',
        '{"ca_common_name": "certctl-loadtest issuing CA", "validity_days": 90, "ca_cert_path": "/tls/issuing-ca.crt", "ca_key_path": "/tls/issuing-ca.key"}', true)
ON CONFLICT DO NOTHING;

INSERT INTO certificate_profiles (id, name, description, max_ttl_seconds, acme_auth_mode)
VALUES (:'profile_id', 'certctl-loadtest TLS', 'load-test harness profile', 7776000, 'trust_authenticated')
ON CONFLICT DO NOTHING;

-- The same profile in challenge mode, the mode a public-facing ACME service runs: certctl validates each
-- authorization's http-01 challenge itself, through its validator pool (the PKI tier's acme_http01_*
-- scenarios; the responder is the stack's challenge-responder).
INSERT INTO certificate_profiles (id, name, description, max_ttl_seconds, acme_auth_mode)
VALUES (:'profile_id' || '-challenge', 'certctl-loadtest TLS, challenge mode', 'load-test harness profile, ACME challenges validated', 7776000, 'challenge')
ON CONFLICT DO NOTHING;

COMMIT;
