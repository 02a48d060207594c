-- Deploy tier: the certificates each deploy target serves, and their bindings to it.
--
-- No API call binds a certificate to a target (docs/certctl-findings.md#no-target-binding): `target_ids`
-- on create is echoed and dropped. Without a certificate_target_mappings row the agent never sees the
-- certificate's renewal (AwaitingCSR) job and no deployment follows signing, so this fixture writes
-- the rows certctl's own demo seed writes. The targets themselves were created through the API
-- (fixtures/deploy/register.sh) and are found here by name.
--
-- Per target `lt-deploy-<type>`: :per_target certificates `lt-deploy-<type>-<n>`, all for the host the
-- target answers as (CN and SAN `deploy-<type>`, `f5` for the F5 virtual server), in the renewal
-- policy and issuer of 00_base.sql, Active, expiring in 60 days (outside the 30-day window: the
-- renewal scan leaves them alone; the scenarios renew them).
BEGIN;

-- certctl stores a target's config redacted ("********" for every field whose name contains key,
-- password, secret, token...) and hands agents that redacted copy: the agent writes the private key to
-- a file named ******** and logs in to the F5 with the password ********
-- (docs/certctl-findings.md#target-secrets-redacted). The targets were created through the API; their
-- two redacted fields are written back here, the values register.sh sent.
UPDATE deployment_targets SET config = config || '{"key_path": "/etc/certctl-loadtest/key.pem"}'::jsonb
WHERE name IN ('lt-deploy-nginx', 'lt-deploy-apache');
UPDATE deployment_targets SET config = config || '{"password": "admin"}'::jsonb
WHERE name = 'lt-deploy-f5';

INSERT INTO managed_certificates (id, name, common_name, sans, owner_id, team_id, issuer_id, renewal_policy_id,
                                  status, expires_at, tags, environment, created_at, updated_at)
SELECT t.name || '-' || n, t.name || '-' || n, h.host, ARRAY[h.host], :'owner_id', :'team_id', :'issuer_id', :'policy_id',
       'Active', now() + interval '60 days', '{"loadtest": "deploy"}'::jsonb, 'loadtest', now(), now()
FROM deployment_targets t
JOIN (VALUES ('lt-deploy-nginx', 'deploy-nginx'), ('lt-deploy-apache', 'deploy-apache'),
             ('lt-deploy-haproxy', 'deploy-haproxy'), ('lt-deploy-f5', 'f5')) AS h(target, host) ON h.target = t.name
CROSS JOIN generate_series(1, :per_target) AS n;

INSERT INTO certificate_target_mappings (certificate_id, target_id)
SELECT t.name || '-' || n, t.id
FROM deployment_targets t
CROSS JOIN generate_series(1, :per_target) AS n
WHERE t.name LIKE 'lt-deploy-%';

COMMIT;

SELECT t.name AS target, count(*) AS certificates
FROM certificate_target_mappings m JOIN deployment_targets t ON t.id = m.target_id
GROUP BY t.name ORDER BY t.name;
