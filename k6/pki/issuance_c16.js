// PKI tier: certctl's issuance throughput with 16 client(s) issuing one certificate after another
// (create + agent CSR, the chain verified to the issuing CA): certificates a second and their latency,
// one point of the scaling curve issuance_c1, issuance_c4 and issuance_c16 draw together.
import { defineScenario } from '../lib/scenario.js';
import { pkiProbe, issuance, ISSUANCE_COUNTERS } from '../lib/pki.js';
import { pkiIssueMS } from '../lib/metrics.js';

const s = defineScenario({
  name: 'issuance_c16',
  tier: 'pki',
  budget: 'issuance_throughput',
  load: { executor: 'constant-vus', vus: 16 },
  probe: pkiProbe,
  latencyMetric: pkiIssueMS,
  counters: ISSUANCE_COUNTERS,
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default async function (data) {
  await issuance(s.cfg, data);
}
