// Auth tier: the whole OIDC login as a browser makes it, 2 a second (a large team's morning): certctl's
// redirect, Keycloak's form and its answer, certctl's callback, a session cookie. Each leg is timed on
// its own; the callback is certctl's work, which its published benchmark puts at p99 < 5 ms with an
// in-memory mock provider (docs/auth.md). The users (AUTH_USERS) take turns.
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { authProbe, authConfig, login } from '../lib/oidc.js';
import { oidcLoginMS, oidcInitiateMS, oidcProviderMS, oidcCallbackMS, oidcLoginFailed } from '../lib/metrics.js';

const a = authConfig(__ENV);
const s = defineScenario({
  name: 'oidc_login',
  tier: 'auth',
  budget: 'oidc_login',
  load: { executor: 'constant-arrival-rate', rate: 2, preAllocatedVUs: 5, maxVUs: 50 },
  probe: (cfg) => authProbe(cfg, a),
  latencyMetric: oidcLoginMS,
  trends: { initiate: oidcInitiateMS, provider: oidcProviderMS, callback: oidcCallbackMS },
  counters: { login_failed: oidcLoginFailed },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  login(s.cfg, a, data.providerId, exec.scenario.iterationInTest % a.users);
}
