// Deploy tier: a mass rotation, as after a CA incident. DEPLOY_MASS_CERTS certificates (1000 by
// default, spread evenly over the four targets) renewed at once through bulk renewal, then followed
// until every target has run its deployments and serves a new certificate: the time that takes per
// target and in all, deployments per minute, jobs failed, retried or never run. One iteration; DURATION
// bounds it, DEPLOY_MASS_DEADLINE is its budget.
import { defineScenario } from '../lib/scenario.js';
import { deployConfig, deployProbe, deployTrends, massPlan, massRotation, DEPLOY_COUNTERS } from '../lib/deploy.js';
import { deployMassPerMin, deployRetried } from '../lib/metrics.js';

const dcfg = deployConfig();
const s = defineScenario({
  name: 'mass_rotation',
  tier: 'deploy',
  budget: 'mass_rotation',
  load: { executor: 'per-vu-iterations', vus: 1, iterations: 1, gracefulStop: '60s' },
  probe: deployProbe(dcfg, (cfg, info) => ({
    mass_certs: dcfg.massCerts, mass_deadline_s: dcfg.massDeadlineS, plan: massPlan(cfg, dcfg, info.pools, info.targets),
  })),
  latencyMetric: 'deploy_mass_ms',
  trends: Object.assign(deployTrends(), { per_minute: deployMassPerMin }),
  counters: Object.assign({ retried: deployRetried }, DEPLOY_COUNTERS),
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  massRotation(s.cfg, dcfg, data.plan);
}
