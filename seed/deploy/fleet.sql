-- fleet_rotation: one certificate per fleet target, bound to it.
--
-- The fleet's agents and targets were registered through the API (fixtures/deploy/fleet-register.sh),
-- named lt-fleet-<a> and lt-fleet-<a>-<t>. As for the loop scenarios' targets (bindings.sql), no API
-- binds a certificate to a target (docs/certctl-findings.md#no-target-binding) and certctl stores each
-- target's key_path redacted (docs/certctl-findings.md#target-secrets-redacted): this writes the
-- binding rows and the key paths register sent (beside cert_path, key.pem for cert.pem).
--
-- Per target: certificate lt-fleet-<a>-<t>, CN and SAN lt-fleet-<a>-<t>.fleet.loadtest.example, in the
-- renewal policy and issuer of 00_base.sql, Active, expiring in 60 days (outside certctl's 31-day scan
-- window: the scenario renews them at the fleet's rotation rate, compressed).
BEGIN;

UPDATE deployment_targets SET config = config || jsonb_build_object('key_path', regexp_replace(config->>'cert_path', 'cert\.pem$', 'key.pem'))
WHERE name LIKE 'lt-fleet-%';

INSERT INTO managed_certificates (id, name, common_name, sans, owner_id, team_id, issuer_id, renewal_policy_id,
                                  status, expires_at, tags, environment, created_at, updated_at)
SELECT t.name, t.name, t.name || '.fleet.loadtest.example', ARRAY[t.name || '.fleet.loadtest.example'],
       :'owner_id', :'team_id', :'issuer_id', :'policy_id',
       'Active', now() + interval '60 days', '{"loadtest": "fleet"}'::jsonb, 'loadtest', now(), now()
FROM deployment_targets t
WHERE t.name LIKE 'lt-fleet-%';

INSERT INTO certificate_target_mappings (certificate_id, target_id)
SELECT t.name, t.id FROM deployment_targets t WHERE t.name LIKE 'lt-fleet-%';

COMMIT;

SELECT count(DISTINCT t.agent_id) AS agents, count(*) AS targets, count(m.certificate_id) AS bound_certificates
FROM deployment_targets t LEFT JOIN certificate_target_mappings m ON m.target_id = t.id
WHERE t.name LIKE 'lt-fleet-%';
