// Auth tier: sessions ended under load must be refused on their next call. Each iteration logs a user in,
// makes one call with the session, ends it, and calls again: by certctl's own logout (POST /auth/logout
// with the CSRF token) or at the provider (Keycloak ends the user's sessions and posts a back-channel
// logout token to certctl), in turn (tag way: logout or backchannel). A session accepted after its end
// is counted (session_revoked_accepted): its budget is none. One every 2 s (what certctl's logins carry on
// 2 CPUs, oidc_login.js); each VU keeps a user of its own, as a back-channel logout ends every session of
// its user.
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { authProbe, authConfig, loginAndLogout } from '../lib/oidc.js';
import {
  sessionRevokedAccepted, oidcLoginFailed, logoutEffectiveMS, oidcInitiate401, oidcInitiate500, sessionAddedMS, backchannelSessionKept,
} from '../lib/metrics.js';

const a = authConfig(__ENV);
const s = defineScenario({
  name: 'logout',
  tier: 'auth',
  budget: 'logout',
  load: { executor: 'constant-arrival-rate', rate: 1, timeUnit: '2s', preAllocatedVUs: 4, maxVUs: 20 },
  probe: (cfg) => authProbe(cfg, a),
  latencyMetric: logoutEffectiveMS,
  trends: {
    effective_logout: 'logout_effective_ms{way:logout}',
    effective_backchannel: 'logout_effective_ms{way:backchannel}',
    session_added: sessionAddedMS,
  },
  counters: {
    revoked_accepted: sessionRevokedAccepted, backchannel_kept: backchannelSessionKept, login_failed: oidcLoginFailed,
    initiate_401: oidcInitiate401, initiate_500: oidcInitiate500,
  },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  const way = exec.scenario.iterationInTest % 2 === 0 ? 'logout' : 'backchannel';
  loginAndLogout(s.cfg, a, data, way, (exec.vu.idInTest - 1) % a.users);
}
