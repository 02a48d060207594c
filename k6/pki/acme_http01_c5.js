// PKI tier, challenge mode: 5 clients each placing one signed ACME order after another on the
// challenge-mode profile, where certctl validates every authorization itself: it fetches the http-01 key
// authorization from the stack's challenge responder through its validator pool (10 at a time by
// default). Issuances a second at 1, 5 and 25 clients are the columns ACME servers publish; validation
// (respond → valid) is timed on its own.
import { defineScenario } from '../lib/scenario.js';
import { challengeProbe, acmeOrder, ACME_CHALLENGE_COUNTERS, ACME_CHALLENGE_TRENDS } from '../lib/pki.js';
import { acmeOrderMS } from '../lib/metrics.js';

const s = defineScenario({
  name: 'acme_http01_c5',
  tier: 'pki',
  budget: 'acme_http01',
  load: { executor: 'constant-vus', vus: 5 },
  probe: challengeProbe,
  latencyMetric: acmeOrderMS,
  trends: ACME_CHALLENGE_TRENDS,
  counters: ACME_CHALLENGE_COUNTERS,
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default async function (data) {
  await acmeOrder(s.cfg, data, 'http-01');
}
