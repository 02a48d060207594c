// Growth tier: the dashboard's counts (GET /api/v1/stats/summary), 12 a minute by default: a few
// operators' dashboards refreshing. One of the growth mix's operations (docs/growth.md), at 2 a minute
// there: certctl reads every job and agent for it (docs/certctl-findings.md#summary-reads-every-job), seconds
// at 10k certificates, so a faster rate measures its own queue.
import { defineScenario } from '../lib/scenario.js';
import { statsSummary } from '../lib/certctl.js';

const s = defineScenario({
  name: 'stats_summary',
  tier: 'growth',
  budget: 'stats_summary',
  load: { executor: 'constant-arrival-rate', rate: 12, timeUnit: '1m', preAllocatedVUs: 10, maxVUs: 100 },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function () {
  statsSummary(s.cfg);
}
