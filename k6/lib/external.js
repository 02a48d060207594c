// A certctl the harness did not start (TARGET=external): the rows seed-external writes and the test of
// what is the harness's to clean up. Everything the scenarios create is named `lt-…`.
export const PREFIX = 'lt-';
export const HARNESS_NAME = 'certctl-loadtest';

// ours: a row the harness's runs created (certificates, agents): its id or name has the prefix.
export function ours(row) {
  return String(row.id || '').startsWith(PREFIX) || String(row.name || '').startsWith(PREFIX);
}

// baseRows: the base rows in creation order, each with the body seed-external posts. The issuer is a
// GenericCA with no key of its own: certctl makes up a sub-CA for it at every start, which is enough to
// sign a load test's certificates and trusted by nobody.
export function baseRows(cfg) {
  const ids = cfg.ids;
  return [
    { kind: 'team', path: '/api/v1/teams', id: ids.team, body: { description: 'load-test harness rows' } },
    { kind: 'owner', path: '/api/v1/owners', id: ids.owner, body: { email: 'loadtest@example.com', team_id: ids.team } },
    { kind: 'profile', path: '/api/v1/profiles', id: ids.profile, body: { description: 'load-test harness profile', max_ttl_seconds: 7776000, enabled: true } },
    { kind: 'policy', path: '/api/v1/renewal-policies', id: ids.policy, body: { renewal_window_days: 30, auto_renew: true, max_retries: 3, retry_interval_seconds: 3600 } },
    { kind: 'issuer', path: '/api/v1/issuers', id: ids.issuer, body: { type: 'GenericCA', enabled: true, config: { ca_common_name: 'certctl-loadtest issuing CA', validity_days: 90 } } },
  ];
}
