// Spot check: certctl's scheduler tick, its baseline #3 (the renewal scan). certctl's recipe is to force
// a scan with POST /api/v1/admin/scheduler/run-now/renewal and watch the log for `renewal scan
// complete`: within 100 ms for its 15-certificate demo data, under 5 s for 1000 certificates, over
// 10 s something is wrong. v2.1.7 has neither the endpoint (404) nor the log line
// (docs/certctl-findings.md#renewal-scan-trigger): a scan cannot be started from outside, only waited
// for, through its footprint in the API (k6/lib/renewal.js says how). The job processor's dispatch
// and drain after it are recorded, untimed.
// The scan runs at boot and every CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL (certctl's default 1 h, at
// least 1 m, ±10 %). The stack's due certificates are the scale seed's (SEED_BULK_CERTS, 10,000), seeded
// after certctl boots, so the scan at boot misses them and the first scheduled one takes them all. The
// spot checks need that one to come after the other checks, which it would disturb (minutes of both
// cores), and before this one gives up: `make spotcheck` runs with a 3-minute interval, and the file
// name makes this check run last (`loadtest spotcheck` runs file-name order). If the scan came earlier
// anyway, the check still measures its jobs, and says the checks before it ran alongside it.
import { renewalScanMS, renewalScanPerCertificate, renewalScanDue, renewalScanJobs, renewalDispatchMS, renewalDrainMS } from '../lib/metrics.js';
import { watchRenewalScan } from '../lib/renewal.js';
import { defineSpotcheck, params, trendValues, countOf, round } from './lib/spotcheck.js';

// A 3-minute interval with certctl's +10 % jitter from boot, and a margin. WAIT_S + SCAN_MAX_S +
// DRAIN_MAX_S stay within the spot checks' 10-minute maxDuration.
const WAIT_S = 240;
const SCAN_MAX_S = 240;
const DRAIN_MAX_S = 90;

const s = defineSpotcheck({
  name: 'tick_renewal_scan',
  iterations: 1,
  latency: 'http_req_duration{phase:measured}',
  recorded: ['renewal_scan_ms', 'renewal_dispatch_ms', 'renewal_drain_ms'],
  counters: { due: renewalScanDue, renewal_jobs: renewalScanJobs },
  figures: (data) => ({
    due_certificates: countOf(data, renewalScanDue.name),
    renewal_jobs: countOf(data, renewalScanJobs.name),
    scan_ms: round(trendValues(data, renewalScanMS.name).max, 1),
    per_certificate_ms: round(trendValues(data, renewalScanPerCertificate.name).max, 3),
    dispatch_s: round(trendValues(data, renewalDispatchMS.name).max / 1000, 1),
    drain_s: round(trendValues(data, renewalDrainMS.name).max / 1000, 1),
  }),
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  watchRenewalScan(s.cfg, {
    name: 'tick_renewal_scan', params: (tags, expected) => params(s.cfg, tags, expected), tags: { phase: 'measured' },
    waitS: WAIT_S, scanMaxS: SCAN_MAX_S, drainMaxS: DRAIN_MAX_S, drainJudged: false,
  });
}
