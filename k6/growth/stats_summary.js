// Growth tier: the dashboard's counts (GET /api/v1/stats/summary), 2/s by default: a few operators'
// dashboards refreshing. One of the growth mix's operations (docs/growth.md): its counts scan tables that
// grow with the inventory.
import { defineScenario } from '../lib/scenario.js';
import { statsSummary } from '../lib/certctl.js';

const s = defineScenario({
  name: 'stats_summary',
  tier: 'growth',
  budget: 'stats_summary',
  load: { executor: 'constant-arrival-rate', rate: 2, preAllocatedVUs: 10, maxVUs: 100 },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function () {
  statsSummary(s.cfg);
}
