// API tier: inventory listing (GET /api/v1/certificates?per_page=50), 50/s by default.
import { defineScenario } from '../lib/scenario.js';
import { listCertificates } from '../lib/certctl.js';

const s = defineScenario({
  name: 'list_certificates',
  tier: 'api',
  budget: 'list_certificates',
  // 50 VUs ready from the start cover 1 s of latency: VUs k6 adds mid-run start late and drop iterations.
  // 5 s after issuance, as certctl's own harness staggers its two API scenarios.
  load: { executor: 'constant-arrival-rate', rate: 50, preAllocatedVUs: 50, maxVUs: 300, startTime: '5s' },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function () {
  listCertificates(s.cfg, 50);
}
