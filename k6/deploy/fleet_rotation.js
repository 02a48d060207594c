// Deploy tier: can certctl carry a fleet at 47-day rotation? A fleet of DEPLOY_FLEET_AGENTS agents (50)
// with DEPLOY_FLEET_TARGETS file targets each (4), one certificate per target, rotated at the rate a
// DEPLOY_FLEET_ROTATION_DAYS (47) rotation asks, compressed DEPLOY_FLEET_COMPRESSION (10,000) times: 200
// certificates, 30 renewals a minute. Each renewal's loop (renewal → agent CSR → signed → deployment
// done) and the fleet's job backlog over time come from certctl's own job timestamps, read once the load
// is over (k6/lib/fleet.js). The agents' 30-second poll sets the loop's floor, as for deploy_latency.
import { defineScenario } from '../lib/scenario.js';
import { fleetConfig, fleetProbe, fleetRenew, fleetSettle } from '../lib/fleet.js';
import {
  fleetSignedMS, fleetDeployed, fleetBacklog, fleetRenewals, fleetNotSigned, fleetFailed, fleetStuck,
} from '../lib/metrics.js';

const fcfg = fleetConfig();
const s = defineScenario({
  name: 'fleet_rotation',
  tier: 'deploy',
  budget: 'fleet_rotation',
  load: { executor: 'constant-arrival-rate', rate: fcfg.perMin, timeUnit: '1m', preAllocatedVUs: 2, maxVUs: 10 },
  // The wait for the last loops and the read of every fleet job happen in teardown.
  options: { teardownTimeout: `${fcfg.settleS + 120}s` },
  probe: fleetProbe(fcfg),
  latencyMetric: 'fleet_loop_ms',
  trends: { signed: fleetSignedMS, backlog: fleetBacklog },
  counters: { renewals: fleetRenewals, deployed: fleetDeployed, not_signed: fleetNotSigned, failed: fleetFailed, stuck: fleetStuck },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  fleetRenew(s.cfg, data);
}
export function teardown(data) {
  fleetSettle(s.cfg, fcfg, data, 'fleet_rotation');
}
