// Scale tier: an ACME enrollment burst. The acme_flow surface (directory, new-nonce, renewal-info)
// from 200 VUs in a closed loop for the whole duration. Counts 5xx and the shape of every 429.
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { acmeProbe, acmeIteration, loadCSRs, ACME_COUNTERS, ARI_CERTIFICATES } from '../lib/acme.js';

const s = defineScenario({
  name: 'acme_burst',
  tier: 'scale',
  budget: 'acme_burst',
  load: { executor: 'constant-vus', vus: 200 },
  probe: acmeProbe(loadCSRs('/tls/ari', ARI_CERTIFICATES)),
  counters: ACME_COUNTERS,
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  acmeIteration(s.cfg, data.ari_certificates, exec.scenario.iterationInTest);
}
