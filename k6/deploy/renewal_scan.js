// Deploy tier: the scheduler's side of rotation. SEED_BULK_CERTS certificates (10,000) enter their
// renewal window at once; certctl's renewal scan turns each into a Renewal job, and its job processor
// hands each to key generation (AwaitingCSR: agent key generation, the stack's mode). Measured: the
// scan's time per certificate, by the jobs' own timestamps, and the time from its last job until the
// processor has drained them all. The run sets certctl's intervals short (renewal check 1m, its floor;
// job processor 10s) unless told otherwise; the journey is k6/lib/renewal.js's. One iteration;
// DURATION bounds it.
import { defineScenario } from '../lib/scenario.js';
import { probeCertctl } from '../lib/probe.js';
import { knob, durationSeconds } from '../lib/config.js';
import { requestParams } from '../lib/certctl.js';
import { watchRenewalScan } from '../lib/renewal.js';
import {
  renewalScanPerCertificate, renewalScanDue, renewalScanJobs, renewalDispatchMS, renewalDrainMS, renewalScanComplete,
} from '../lib/metrics.js';

// The first scheduled scan comes one interval (+10 % jitter) after certctl's boot, which precedes
// this scenario; the scan and the drain get minutes, within DURATION.
const CHECK_S = durationSeconds(knob(__ENV, 'CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL'), 'CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL');
const WATCH = { waitS: Math.ceil(CHECK_S * 1.1) + 30, scanMaxS: 600, drainMaxS: 300 };

const s = defineScenario({
  name: 'renewal_scan',
  tier: 'deploy',
  budget: 'renewal_scan',
  load: { executor: 'per-vu-iterations', vus: 1, iterations: 1, gracefulStop: '30s' },
  probe: (cfg) => Object.assign(probeCertctl(cfg), {
    renewal_check_interval: knob(__ENV, 'CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL'),
    job_processor_interval: knob(__ENV, 'CERTCTL_SCHEDULER_JOB_PROCESSOR_INTERVAL'),
    wait_s: WATCH.waitS,
  }),
  latencyMetric: 'renewal_scan_ms',
  trends: { per_certificate: renewalScanPerCertificate, dispatch: renewalDispatchMS, drain: renewalDrainMS },
  counters: { due: renewalScanDue, renewal_jobs: renewalScanJobs, complete: renewalScanComplete },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function () {
  watchRenewalScan(s.cfg, Object.assign({
    name: 'renewal_scan', params: (tags, expected) => requestParams(s.cfg, tags, expected), tags: { phase: 'measured' }, drainJudged: true,
  }, WATCH));
}
