// Deploy tier: the whole rotation loop, one target type after another. Each iteration renews a
// certificate bound to a target (seed/deploy/bindings.sql) and follows it until the target serves
// the new serial: per target type, the loop and its stages (signed, deployment job, served).
// 4 loops a minute (one per target type): the agents' 30-second poll makes each one last 30-90 s. Each
// starts after a random part of that poll (phaseJitter), so the loops sample every phase of it.
// A served loop then asks certctl to deploy the certificate again through POST /certificates/{id}/deploy
// and counts whether that made a deployment job (docs/certctl-findings.md#no-target-binding).
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { TYPES, deployConfig, deployProbe, deployTrends, phaseJitter, redeploy, renewAndFollow, DEPLOY_COUNTERS } from '../lib/deploy.js';
import { deployEndpointJob, deployEndpointNoJob } from '../lib/metrics.js';

const dcfg = deployConfig();
const s = defineScenario({
  name: 'deploy_latency',
  tier: 'deploy',
  budget: 'deploy_latency',
  load: { executor: 'constant-arrival-rate', rate: 4, timeUnit: '1m', preAllocatedVUs: 8, maxVUs: 40, gracefulStop: '150s' },
  probe: deployProbe(dcfg),
  latencyMetric: 'deploy_loop_ms',
  trends: deployTrends(),
  counters: Object.assign({ endpoint_job: deployEndpointJob, endpoint_no_job: deployEndpointNoJob }, DEPLOY_COUNTERS),
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  const i = exec.scenario.iterationInTest;
  const type = TYPES[i % TYPES.length];
  const pool = data.pools[type];
  const certId = pool[Math.floor(i / TYPES.length) % pool.length];
  phaseJitter();
  if (renewAndFollow(s.cfg, dcfg, type, certId).ok) redeploy(s.cfg, type, certId, data.targets[type]);
}
