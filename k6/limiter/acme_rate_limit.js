// Limiter tier: certctl's per-client rate limiter on (50 requests/s, burst 100, before auth), and an ACME
// client asking twice as fast, 100 new-nonce requests/s. What is judged is the answer to the excess:
// RFC 8555 asks for a 429 problem+json of type rateLimited, which clients such as certbot and lego
// parse to back off. Runs on a stack of its own (make loadtest-limiter): the limiter would throttle any
// other scenario's load beside it.
import { defineScenario } from '../lib/scenario.js';
import { limiterProbe, newNonceLimited, ACME_COUNTERS } from '../lib/acme.js';

const s = defineScenario({
  name: 'acme_rate_limit',
  tier: 'limiter',
  budget: 'acme_rate_limit',
  load: { executor: 'constant-arrival-rate', rate: 100, preAllocatedVUs: 50, maxVUs: 200 },
  probe: limiterProbe,
  counters: ACME_COUNTERS,
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function () {
  newNonceLimited(s.cfg);
}
