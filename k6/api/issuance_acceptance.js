// API tier: certctl accepting new certificate requests (POST /api/v1/certificates), 50/s by default.
import { defineScenario } from '../lib/scenario.js';
import { createCertificate } from '../lib/certctl.js';

const s = defineScenario({
  name: 'issuance_acceptance',
  tier: 'api',
  budget: 'issuance_acceptance',
  // VUs k6 adds mid-run start late and drop iterations, so the VUs a stall needs are ready from the start:
  // 150 cover 3 s at 50/s. The stack stalled both API scenarios for 2.6 s on 2 CPUs with the budgets
  // held (run m49-default-1, PostgreSQL 16), and 50 VUs turned that into dropped iterations.
  load: { executor: 'constant-arrival-rate', rate: 50, preAllocatedVUs: 150, maxVUs: 300 },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function () {
  createCertificate(s.cfg);
}
