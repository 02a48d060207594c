// Auth tier: the API tier's calls made with a session cookie, side by side with the same calls made
// with the API key, in one run at one rate: each iteration lists and creates a certificate both ways,
// and asks who it is (GET /api/v1/auth/check, the cheapest authenticated call) both ways. What the
// session path adds is the difference of the two (tag auth: session or key). Setup logs every user in
// once; the VUs share their sessions.
//
// Budget: certctl publishes session validation at p99 < 1 ms steady and < 10 ms with the database's
// round trips (its cold-process benchmark); so the session's who-am-I must answer within 10 ms at p99
// end to end. Its list and create keep the API tier's budgets.
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { authConfig, sessionProbe, sessionAPICalls } from '../lib/oidc.js';

const a = authConfig(__ENV);
const s = defineScenario({
  name: 'session_api',
  tier: 'auth',
  budget: 'session_api',
  load: { executor: 'constant-arrival-rate', rate: 50, preAllocatedVUs: 50, maxVUs: 300 },
  probe: (cfg) => sessionProbe(cfg, a),
  trends: {
    check_session: 'http_req_duration{endpoint:check,auth:session}',
    check_key: 'http_req_duration{endpoint:check,auth:key}',
    list_session: 'http_req_duration{endpoint:list,auth:session}',
    list_key: 'http_req_duration{endpoint:list,auth:key}',
    create_session: 'http_req_duration{endpoint:create,auth:session}',
    create_key: 'http_req_duration{endpoint:create,auth:key}',
  },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  sessionAPICalls(s.cfg, data.sessions[exec.scenario.iterationInTest % data.sessions.length]);
}
