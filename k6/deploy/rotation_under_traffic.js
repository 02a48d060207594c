// Deploy tier: clients keep coming while certificates rotate. Every target takes a steady handshake load
// (fresh connections, verified against the run's CA) and, once a minute each, renews its certificate
// and deploys it through certctl and its agent. The budget: no client handshake fails during a rotation,
// and once certctl calls the deployment Completed no handshake gets anything but the new certificate.
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { TYPES, clientHandshake, deployConfig, deployProbe, deployTrends, phaseJitter, rotateAndWatch, DEPLOY_COUNTERS } from '../lib/deploy.js';
import { deployHandshakeFailed, deployWrongSerial } from '../lib/metrics.js';

const dcfg = deployConfig();

// 20 handshakes a second, 5 per target; of every 1200 iterations (a minute) the first four rotate a
// target each, and hold their VU for the minute the loop takes.
const RATE = 20;
const ROTATE_EVERY = RATE * 60;

const s = defineScenario({
  name: 'rotation_under_traffic',
  tier: 'deploy',
  budget: 'rotation_under_traffic',
  load: { executor: 'constant-arrival-rate', rate: RATE, timeUnit: '1s', preAllocatedVUs: 20, maxVUs: 60, gracefulStop: '150s' },
  options: { noConnectionReuse: true },
  probe: deployProbe(dcfg, () => ({ rotate_every_iterations: ROTATE_EVERY })),
  latencyMetric: 'deploy_loop_ms',
  trends: deployTrends(),
  counters: Object.assign({ handshake_failed: deployHandshakeFailed, wrong_serial: deployWrongSerial }, DEPLOY_COUNTERS),
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  const i = exec.scenario.iterationInTest;
  const type = TYPES[i % TYPES.length];
  if (i % ROTATE_EVERY < TYPES.length) {
    const round = Math.floor(i / ROTATE_EVERY);
    const pool = data.pools[type];
    phaseJitter();
    rotateAndWatch(s.cfg, dcfg, type, pool[round % pool.length]);
    return;
  }
  clientHandshake(s.cfg, type);
}
