// Spot check: certctl's scheduler tick, its baseline #3 (the renewal scan). certctl's recipe is to force
// a scan with POST /api/v1/admin/scheduler/run-now/renewal and watch the log for `renewal scan
// complete`: within 100 ms for its 15-certificate demo data, under 5 s for 1000 certificates, over
// 10 s something is wrong. v2.1.7 has neither the endpoint (404) nor the log line
// (docs/certctl-findings.md#renewal-scan-trigger): a scan cannot be started from outside, only waited
// for. What the API does show is the scan's footprint: the scan creates one Renewal job per due
// certificate, stamped with certctl's own clock (created_at, in µs), and moves the certificate out of
// Active. So the check
//  1. sends the documented trigger anyway and logs the answer;
//  2. counts the certificates due for renewal (expiring within 31 days: certctl's scan window, whatever
//     the renewal policy says) and how many of them are still Active;
//  3. polls the Active count every second until it drops (the scan has started; at most WAIT_S after
//     the check started) and reaches 0, then the Renewal job total until it stops growing;
//  4. reads the first and the last new job: scan time = last created_at − first created_at, per
//     certificate = scan time / (jobs − 1). That leaves out the scan's opening query and its first
//     certificate: a lower bound of the tick's length, and its cost per certificate, at µs resolution;
//  5. checks that no due certificate is left Active or Expiring (skipped without a job), then waits,
//     untimed, until the job processor (its own tick, every 30 s) has taken every Renewal job out of
//     Pending: renewal_dispatch_ms, from the last job's creation, to the poll's 1 s resolution.
// The scan runs at boot and every CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL (certctl's default 1 h, at
// least 1 m, ±10 %). The stack's due certificates are the scale seed's (SEED_BULK_CERTS, 10,000), seeded
// after certctl boots, so the scan at boot misses them and the first scheduled one takes them all. The
// spot checks need that one to come after the other checks, which it would disturb (minutes of both
// cores), and before this one gives up: `make spotcheck` runs with a 3-minute interval, and the file
// name makes this check run last (`loadtest spotcheck` runs file-name order). If the scan came earlier
// anyway, the check still measures its jobs, and says the checks before it ran alongside it.
import http from 'k6/http';
import { check, sleep } from 'k6';
import { renewalScanMS, renewalScanPerCertificate, renewalScanDue, renewalScanJobs, renewalDispatchMS } from '../lib/metrics.js';
import { defineSpotcheck, params, json, trendValues, countOf, round } from './lib/spotcheck.js';

// A 3-minute interval with certctl's +10 % jitter from boot, and a margin.
const WAIT_S = 240;
const SCAN_MAX_S = 240;
const QUIET_S = 3;
const DISPATCH_MAX_S = 90;
const WINDOW_DAYS = 31;

const s = defineSpotcheck({
  name: 'tick_renewal_scan',
  iterations: 1,
  latency: 'http_req_duration{phase:measured}',
  recorded: ['renewal_scan_ms', 'renewal_dispatch_ms'],
  counters: { due: renewalScanDue, renewal_jobs: renewalScanJobs },
  figures: (data) => ({
    due_certificates: countOf(data, renewalScanDue.name),
    renewal_jobs: countOf(data, renewalScanJobs.name),
    scan_ms: round(trendValues(data, renewalScanMS.name).max, 1),
    per_certificate_ms: round(trendValues(data, renewalScanPerCertificate.name).max, 3),
    dispatch_s: round(trendValues(data, renewalDispatchMS.name).max / 1000, 1),
  }),
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

// parseTimeMS: certctl's RFC 3339 timestamps carry up to nanoseconds, more than Date.parse reads;
// milliseconds since the epoch, with the fraction kept.
function parseTimeMS(t) {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/.exec(String(t));
  return m ? Date.parse(m[1] + m[3]) + (m[2] ? Number(m[2]) * 1000 : 0) : NaN;
}

function fail(name, why) {
  check(null, { [name]: () => false }, { phase: 'measured' });
  console.error(`tick_renewal_scan: ${why}`);
}

// A list's first page of one row: { total, first } or null (the check has failed, and says why).
function page(path, what) {
  const res = http.get(`${s.cfg.baseUrl}${path}`, params(s.cfg, { phase: 'measured', name: `GET ${path.split('?')[0]} (${what})` }));
  const b = res.status === 200 ? json(res) : null;
  const ok = check(res, { [`${what}: 200 with a total`]: () => !!b && typeof b.total === 'number' }, { phase: 'measured' });
  if (!ok) {
    console.error(`tick_renewal_scan: ${what}: HTTP ${res.status}: ${String(res.body).slice(0, 200)}`);
    return null;
  }
  return { total: b.total, first: (b.data || [])[0] };
}

export default function () {
  const started = Date.now();
  const trigger = http.post(`${s.cfg.baseUrl}/api/v1/admin/scheduler/run-now/renewal`, null,
    params(s.cfg, { phase: 'trigger', name: 'POST /api/v1/admin/scheduler/run-now/renewal' }, [200, 202, 404]));
  console.log(`tick_renewal_scan: certctl's documented trigger POST /api/v1/admin/scheduler/run-now/renewal answered HTTP ${trigger.status}` +
    (trigger.status === 404 ? ': no such endpoint, waiting for the scheduled scan' : ''));

  const before = new Date(started + WINDOW_DAYS * 86400e3).toISOString().replace(/\.\d+Z$/, 'Z');
  const dueQuery = (status) => `/api/v1/certificates?${status ? `status=${status}&` : ''}expires_before=${before}&per_page=1`;
  const due = page(dueQuery(''), 'due certificates');
  const active = due && page(dueQuery('Active'), 'due certificates');
  if (!active) return;
  renewalScanDue.add(due.total);
  if (due.total === 0) {
    fail('certificates are due for renewal', 'no certificate expires within 31 days: nothing for a renewal scan to do (the stack seeds SEED_BULK_CERTS of them)');
    return;
  }
  // A scan already under way or over: every Renewal job counts as its own (true in the harness stack).
  const early = active.total < due.total;
  const jobs0 = early ? { total: 0 } : page('/api/v1/jobs?type=Renewal&per_page=1', 'renewal jobs');
  if (!jobs0) return;
  if (early) {
    console.warn(`tick_renewal_scan: a scan started before this check: ${due.total - active.total} of ${due.total} due certificates ` +
      'already taken, so the checks before this one ran alongside it; measuring its jobs');
  }

  // Started: fewer due certificates Active than at first. Done: none left, then no new job for QUIET_S.
  let left = active.total;
  while (!early && left === active.total && Date.now() - started < WAIT_S * 1000) {
    sleep(1);
    const p = page(dueQuery('Active'), 'due certificates');
    if (!p) return;
    left = p.total;
  }
  if (!early && left === active.total) {
    fail(`a renewal scan started within ${WAIT_S} s`, `NO RENEWAL SCAN within ${WAIT_S} s: ${active.total} certificates stayed due and Active. certctl has no way to start ` +
      'a scan from outside (docs/certctl-findings.md#renewal-scan-trigger); it scans every CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL ' +
      '(1h unless set, 1m at least; make spotcheck sets 3m).');
    return;
  }
  check(null, { [`a renewal scan started within ${WAIT_S} s`]: () => true }, { phase: 'measured' });
  const scanStarted = Date.now();
  while (left > 0 && Date.now() - scanStarted < SCAN_MAX_S * 1000) {
    sleep(1);
    const p = page(dueQuery('Active'), 'due certificates');
    if (!p) return;
    left = p.total;
  }
  let jobs = page('/api/v1/jobs?type=Renewal&per_page=1', 'renewal jobs');
  if (!jobs) return;
  for (let quiet = 0; quiet < QUIET_S && Date.now() - scanStarted < SCAN_MAX_S * 1000;) {
    sleep(1);
    const p = page('/api/v1/jobs?type=Renewal&per_page=1', 'renewal jobs');
    if (!p) return;
    quiet = p.total === jobs.total ? quiet + 1 : 0;
    jobs = p;
  }

  // Jobs list newest first: page 1 is the scan's last job, page <new jobs> its first.
  const created = jobs.total - jobs0.total;
  const first = created > 0 ? page(`/api/v1/jobs?type=Renewal&per_page=1&page=${created}`, 'renewal jobs') : null;
  const expiring = page(dueQuery('Expiring'), 'due certificates left Expiring');
  if (!expiring || (created > 0 && !first)) return;
  renewalScanJobs.add(created);
  if (created > 1 && first.first && jobs.first) {
    const ms = parseTimeMS(jobs.first.created_at) - parseTimeMS(first.first.created_at);
    renewalScanMS.add(ms);
    renewalScanPerCertificate.add(ms / (created - 1));
    console.log(`tick_renewal_scan: ${created} Renewal jobs for ${due.total} due certificates, created over ${round(ms, 1)} ms ` +
      `(${first.first.created_at} … ${jobs.first.created_at}): ${round(ms / (created - 1), 3)} ms per certificate`);
  }
  check(null, {
    // A certificate leaves Expiring for RenewalInProgress only once its job exists.
    'every due certificate got a renewal job': () => left === 0 && expiring.total === 0,
  }, { phase: 'measured' });
  if (left !== 0 || expiring.total !== 0) {
    console.error(`tick_renewal_scan: ${due.total} certificates were due, ${created} Renewal jobs appeared; ${left} still Active, ${expiring.total} Expiring without a job ` +
      `(after ${SCAN_MAX_S} s at most)`);
  }

  // Untimed: the job processor's dispatch of the new jobs (its own tick). WAIT_S + SCAN_MAX_S + DISPATCH_MAX_S
  // stay within the spot checks' 10-minute maxDuration.
  const lastCreated = jobs.first ? parseTimeMS(jobs.first.created_at) : Date.now();
  const dispatchStarted = Date.now();
  while (Date.now() - dispatchStarted < DISPATCH_MAX_S * 1000) {
    const p = page('/api/v1/jobs?type=Renewal&status=Pending&per_page=1', 'pending renewal jobs');
    if (!p) return;
    if (p.total === 0) {
      renewalDispatchMS.add(Date.now() - lastCreated);
      console.log(`tick_renewal_scan: every Renewal job out of Pending ${round((Date.now() - lastCreated) / 1000, 1)} s after the last was created`);
      return;
    }
    sleep(1);
  }
  console.warn(`tick_renewal_scan: Renewal jobs still Pending ${DISPATCH_MAX_S} s after the scan`);
}
