// Auth tier: the whole OIDC login as a browser makes it, one every 2 s (a large team's morning): certctl's
// redirect, Keycloak's form and its answer, certctl's callback, a session cookie, then the session's
// first call beside the API key's (session_added_ms). Each leg is timed on its own; the callback is
// certctl's work, which its published benchmark puts at p99 < 5 ms with an in-memory mock provider
// (docs/auth.md). The users (AUTH_USERS) take turns. The rate is what certctl carries on 2 CPUs: each
// login costs certctl nine PBKDF2 derivations (docs/certctl-findings.md#session-pbkdf2-per-request),
// and at 2 a second its CPU saturated and 91 % of logins failed (docs/auth.md).
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { authProbe, authConfig, login, sessionAdded } from '../lib/oidc.js';
import {
  oidcLoginMS, oidcInitiateMS, oidcProviderMS, oidcCallbackMS, oidcLoginFailed, oidcInitiate401, oidcInitiate500, sessionAddedMS,
} from '../lib/metrics.js';

const a = authConfig(__ENV);
const s = defineScenario({
  name: 'oidc_login',
  tier: 'auth',
  budget: 'oidc_login',
  load: { executor: 'constant-arrival-rate', rate: 1, timeUnit: '2s', preAllocatedVUs: 5, maxVUs: 50 },
  probe: (cfg) => authProbe(cfg, a),
  latencyMetric: oidcLoginMS,
  trends: { initiate: oidcInitiateMS, provider: oidcProviderMS, callback: oidcCallbackMS, session_added: sessionAddedMS },
  counters: { login_failed: oidcLoginFailed, initiate_401: oidcInitiate401, initiate_500: oidcInitiate500 },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  const l = login(s.cfg, a, data.providerId, exec.scenario.iterationInTest % a.users);
  if (l.ok) sessionAdded(s.cfg, l);
}
