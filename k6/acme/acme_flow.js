// ACME tier: directory, new-nonce and renewal-info of the harness's ACME profile, 100 iterations/s.
// Renewal-info alternates between certificates issued in setup() through certctl's agent CSR path
// (200 with a suggestedWindow expected) and a synthetic id (404 problem+json expected).
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { acmeProbe, acmeIteration, loadCSRs, ACME_COUNTERS, ARI_CERTIFICATES } from '../lib/acme.js';

const s = defineScenario({
  name: 'acme_flow',
  tier: 'acme',
  budget: 'acme_flow',
  // Three requests an iteration: 150 VUs ready from the start cover 1.5 s iterations; VUs k6 adds
  // mid-run start late and drop iterations.
  load: { executor: 'constant-arrival-rate', rate: 100, preAllocatedVUs: 150, maxVUs: 400 },
  probe: acmeProbe(loadCSRs('/tls/ari', ARI_CERTIFICATES)),
  counters: ACME_COUNTERS,
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  acmeIteration(s.cfg, data.ari_certificates, exec.scenario.iterationInTest);
}
