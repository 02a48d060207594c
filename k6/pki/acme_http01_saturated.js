// PKI tier, challenge mode, the validator pool saturated: ACME_SLOW_VUS clients (15) order names whose
// responder holds every answer CHALLENGE_SLOW_LATENCY (8 s), so their validations hold certctl's http-01
// slots (10 by default, each for its answer's time: 10 s at most for the headers, 30 s in all); two more
// clients order names answered at once. The fast clients' validation is what the pool's queue costs an
// order whose responder is fine: without slow ones about 60 ms (acme_http01_c1). Its budget: no order waits
// past the 30 s certctl's validator gives one challenge, and every order of either part ends as it should.
import { defineScenario } from '../lib/scenario.js';
import { saturationProbe, saturatedOrder, slowVUs, SATURATION_FAST_VUS, ACME_SATURATION_COUNTERS, ACME_SATURATION_TRENDS } from '../lib/pki.js';
import { acmeOrderMS } from '../lib/metrics.js';

const s = defineScenario({
  name: 'acme_http01_saturated',
  tier: 'pki',
  budget: 'acme_http01_saturated',
  load: { executor: 'constant-vus', vus: slowVUs() + SATURATION_FAST_VUS },
  probe: saturationProbe,
  latencyMetric: acmeOrderMS,
  trends: ACME_SATURATION_TRENDS,
  counters: ACME_SATURATION_COUNTERS,
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default async function (data) {
  await saturatedOrder(s.cfg, data);
}
