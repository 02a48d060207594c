// API tier: certctl accepting new certificate requests (POST /api/v1/certificates), 50/s by default.
import { defineScenario } from '../lib/scenario.js';
import { createCertificate } from '../lib/certctl.js';

const s = defineScenario({
  name: 'issuance_acceptance',
  tier: 'api',
  budget: 'issuance_acceptance',
  // 50 VUs ready from the start cover 1 s of latency: VUs k6 adds mid-run start late and drop iterations.
  load: { executor: 'constant-arrival-rate', rate: 50, preAllocatedVUs: 50, maxVUs: 300 },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function () {
  createCertificate(s.cfg);
}
