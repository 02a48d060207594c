-- A scale fixture whose base rows are missing: the scale seed must stop the run before k6 starts.
INSERT INTO managed_certificates (id, name, common_name, owner_id, team_id, issuer_id, renewal_policy_id, status, environment, expires_at)
VALUES ('lt-broken-1', 'loadtest-broken-1', 'broken.loadtest.example.com', 'lt-no-such-owner', 'lt-no-such-team',
        'lt-no-such-issuer', 'lt-no-such-policy', 'Active', 'loadtest', now() + interval '10 days');
