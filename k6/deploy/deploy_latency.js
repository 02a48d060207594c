// Deploy tier: the whole rotation loop, one target type after another. Each iteration renews a
// certificate bound to a target (seed/deploy/bindings.sql) and follows it until the target serves
// the new serial: per target type, the loop and its stages (signed, deployment job, served).
// 4 loops a minute (one per target type): the agents' 30-second poll makes each one last 30-90 s.
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { probeCertctl } from '../lib/probe.js';
import { seededIDs } from '../lib/certctl.js';
import { TYPES, deployConfig, deployFacts, deployPools, deployTrends, renewAndFollow, DEPLOY_COUNTERS } from '../lib/deploy.js';

const s = defineScenario({
  name: 'deploy_latency',
  tier: 'deploy',
  budget: 'deploy_latency',
  load: { executor: 'constant-arrival-rate', rate: 4, timeUnit: '1m', preAllocatedVUs: 8, maxVUs: 40, gracefulStop: '150s' },
  probe: (cfg) => {
    const info = probeCertctl(cfg);
    const pools = deployPools(cfg, seededIDs, dcfg);
    return Object.assign(info, deployFacts(dcfg), { target_types: TYPES.join(','), pools });
  },
  latencyMetric: 'deploy_loop_ms',
  trends: deployTrends(),
  counters: DEPLOY_COUNTERS,
});
const dcfg = deployConfig();

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  const i = exec.scenario.iterationInTest;
  const type = TYPES[i % TYPES.length];
  const pool = data.pools[type];
  renewAndFollow(s.cfg, dcfg, type, pool[Math.floor(i / TYPES.length) % pool.length]);
}
