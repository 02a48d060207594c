// Auth tier: the API tier's calls made with a session cookie, side by side with the same calls made
// with the API key, in one run at one rate: each iteration lists and creates a certificate both ways,
// and asks who it is (GET /api/v1/auth/check, the cheapest authenticated call) both ways. What the
// session path adds is the difference of the two (tag auth: session or key). Setup logs every user in
// once; the VUs share their sessions.
//
// Budget: certctl publishes session validation at p99 < 1 ms steady and < 10 ms with the database's
// round trips (its cold-process benchmark); so the session's who-am-I may take at most 10 ms more than
// the key's at p99 (session_added_ms), and its median at most 50 ms more: a cost per call of that size is
// the key derivation of docs/certctl-findings.md#session-pbkdf2-per-request. Its list and create keep
// the API tier's budgets.
//
// Rate: two iterations a second, six session calls. Not the API tier's 50 a second: each session call
// costs certctl a 600,000-round PBKDF2 (about 170 ms of a CPU here), so 2 CPUs carry about a dozen;
// RATE_SESSION_API raises it.
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { authConfig, sessionProbe, sessionAPICalls } from '../lib/oidc.js';
import { sessionAddedMS, oidcLoginFailed } from '../lib/metrics.js';

const a = authConfig(__ENV);
const s = defineScenario({
  name: 'session_api',
  tier: 'auth',
  budget: 'session_api',
  load: { executor: 'constant-arrival-rate', rate: 2, preAllocatedVUs: 10, maxVUs: 100 },
  probe: (cfg) => sessionProbe(cfg, a),
  trends: {
    check_session: 'http_req_duration{endpoint:check,auth:session}',
    check_key: 'http_req_duration{endpoint:check,auth:key}',
    list_session: 'http_req_duration{endpoint:list,auth:session}',
    list_key: 'http_req_duration{endpoint:list,auth:key}',
    create_session: 'http_req_duration{endpoint:create,auth:session}',
    create_key: 'http_req_duration{endpoint:create,auth:key}',
    session_added: sessionAddedMS,
  },
  counters: { login_failed: oidcLoginFailed },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  sessionAPICalls(s.cfg, data.sessions[exec.scenario.iterationInTest % data.sessions.length]);
}
