// Auth tier: the login's callback when certctl's view of the provider is cold, the row certctl's
// published benchmarks leave empty ("operator-driven"). The cold condition is repeated, not the request:
// before every login either certctl drops its cached discovery and keys (POST …/providers/{id}/refresh,
// what certctl's own cold-cache benchmark loops) or Keycloak rotates its signing key (the ID token then
// names a key certctl has not fetched), in turn (tag cold: refresh or rotation). One every 2 s (what
// certctl's logins carry on 2 CPUs, oidc_login.js), so the default 5 minutes give 150 cold callbacks,
// 75 of each; DURATION=10m gives 150 of each, enough for a p99 of each.
//
// Budget: certctl's target for the cold path is p99 < 200 ms (discovery and key fetch, which it bounds
// by network distance to the provider); here the provider is on the same host, so the target holds
// with room to spare, callback included.
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { authProbe, authConfig, coldLogin, sessionAdded } from '../lib/oidc.js';
import { oidcCallbackMS, oidcInitiateMS, oidcLoginFailed, oidcInitiate401, oidcInitiate500, sessionAddedMS } from '../lib/metrics.js';

const a = authConfig(__ENV);
const s = defineScenario({
  name: 'oidc_cold_jwks',
  tier: 'auth',
  budget: 'oidc_cold_jwks',
  load: { executor: 'constant-arrival-rate', rate: 1, timeUnit: '2s', preAllocatedVUs: 4, maxVUs: 20 },
  probe: (cfg) => authProbe(cfg, a),
  latencyMetric: oidcCallbackMS,
  trends: {
    callback_refresh: 'oidc_callback_ms{cold:refresh}',
    callback_rotation: 'oidc_callback_ms{cold:rotation}',
    initiate_refresh: 'oidc_initiate_ms{cold:refresh}',
    initiate: oidcInitiateMS,
    session_added: sessionAddedMS,
  },
  counters: { login_failed: oidcLoginFailed, initiate_401: oidcInitiate401, initiate_500: oidcInitiate500 },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  const i = exec.scenario.iterationInTest;
  const l = coldLogin(s.cfg, a, data, i % 2 === 0 ? 'refresh' : 'rotation', i % a.users);
  if (l.ok) sessionAdded(s.cfg, l);
}
