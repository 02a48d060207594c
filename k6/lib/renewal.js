// certctl's renewal scan, watched from outside: the journey shared by the deploy tier's renewal_scan
// scenario and the tick_renewal_scan spot check.
//
// certctl cannot be asked to scan (POST /api/v1/admin/scheduler/run-now/renewal is a 404, and a scan
// logs nothing at info: docs/certctl-findings.md#renewal-scan-trigger); it scans at boot and every
// CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL (1 m at least, ±10 %). What the API shows is its footprint:
// one Renewal job per due certificate, stamped with certctl's own clock (created_at, µs), and the
// certificate moving out of Active. So the watch
//  1. sends the documented trigger anyway and logs the answer;
//  2. counts the certificates due (expiring within 31 days, certctl's window whatever the policy says:
//     docs/certctl-findings.md#renewal-scan-window) and how many are still Active;
//  3. polls the Active count every second until it drops (the scan started; at most waitS) and reaches
//     0, then the Renewal job total until it stops growing for QUIET_S;
//  4. reads the scan's first and last job: scan time = last created_at − first created_at, per
//     certificate = scan time / (jobs − 1). That leaves out the scan's opening query and its first
//     certificate: a lower bound of the scan, at µs resolution;
//  5. checks that no due certificate is left Active or Expiring (skipped without a job);
//  6. follows the job processor (its own tick) from the last job's creation: dispatched when no Renewal
//     job is Pending (the processor claims every Pending job at once and marks it Running), drained when
//     none is Running either (processed: with agent key generation each waits in AwaitingCSR for its
//     agent, the processor's part done). To the poll's 1 s resolution.
import http from 'k6/http';
import { check, sleep } from 'k6';
import { json, parseTime } from './certctl.js';
import { round } from './summary.js';
import {
  renewalScanMS, renewalScanPerCertificate, renewalScanDue, renewalScanJobs, renewalDispatchMS, renewalDrainMS, renewalScanComplete,
} from './metrics.js';

const QUIET_S = 3;
const WINDOW_DAYS = 31;

// watchRenewalScan(cfg, w): w = { name (log prefix), params(tags, expected) → request params,
// tags: the measured requests' tags, waitS, scanMaxS, drainMaxS, drainJudged: a drain past drainMaxS fails
// a check (else a warning) }. Fails a check (tagged w.tags) with
// a sentence on the first thing that goes wrong.
export function watchRenewalScan(cfg, w) {
  const say = (msg) => `${w.name}: ${msg}`;
  const fail = (name, why) => {
    check(null, { [name]: () => false }, w.tags);
    console.error(say(why));
  };
  // A list's first page of one row: { total, first } or null (the check has failed, and says why).
  const page = (path, what) => {
    const res = http.get(`${cfg.baseUrl}${path}`, w.params(Object.assign({}, w.tags, { name: `GET ${path.split('?')[0]} (${what})` })));
    const b = res.status === 200 ? json(res) : null;
    const ok = check(res, { [`${what}: 200 with a total`]: () => !!b && typeof b.total === 'number' }, w.tags);
    if (!ok) {
      console.error(say(`${what}: HTTP ${res.status}: ${String(res.body).slice(0, 200)}`));
      return null;
    }
    return { total: b.total, first: (b.data || [])[0] };
  };

  const started = Date.now();
  const trigger = http.post(`${cfg.baseUrl}/api/v1/admin/scheduler/run-now/renewal`, null,
    w.params({ phase: 'trigger', name: 'POST /api/v1/admin/scheduler/run-now/renewal' }, [200, 202, 404]));
  console.log(say(`certctl's documented trigger POST /api/v1/admin/scheduler/run-now/renewal answered HTTP ${trigger.status}` +
    (trigger.status === 404 ? ': no such endpoint, waiting for the scheduled scan' : '')));

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
    console.warn(say(`a scan started before this check: ${due.total - active.total} of ${due.total} due certificates ` +
      'already taken, so what ran before this one ran alongside it; measuring its jobs'));
  }

  // Started: fewer due certificates Active than at first. Done: none left, then no new job for QUIET_S.
  let left = active.total;
  while (!early && left === active.total && Date.now() - started < w.waitS * 1000) {
    sleep(1);
    const p = page(dueQuery('Active'), 'due certificates');
    if (!p) return;
    left = p.total;
  }
  if (!early && left === active.total) {
    fail(`a renewal scan started within ${w.waitS} s`, `NO RENEWAL SCAN within ${w.waitS} s: ${active.total} certificates stayed due and Active. certctl has no way to start ` +
      'a scan from outside (docs/certctl-findings.md#renewal-scan-trigger); it scans every CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL ' +
      '(1h unless set, 1m at least).');
    return;
  }
  check(null, { [`a renewal scan started within ${w.waitS} s`]: () => true }, w.tags);
  const scanStarted = Date.now();
  while (left > 0 && Date.now() - scanStarted < w.scanMaxS * 1000) {
    sleep(1);
    const p = page(dueQuery('Active'), 'due certificates');
    if (!p) return;
    left = p.total;
  }
  let jobs = page('/api/v1/jobs?type=Renewal&per_page=1', 'renewal jobs');
  if (!jobs) return;
  for (let quiet = 0; quiet < QUIET_S && Date.now() - scanStarted < w.scanMaxS * 1000;) {
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
    const ms = parseTime(jobs.first.created_at) - parseTime(first.first.created_at);
    renewalScanMS.add(ms);
    renewalScanPerCertificate.add(ms / (created - 1));
    console.log(say(`${created} Renewal jobs for ${due.total} due certificates, created over ${round(ms, 1)} ms ` +
      `(${first.first.created_at} … ${jobs.first.created_at}): ${round(ms / (created - 1), 3)} ms per certificate`));
  }
  check(null, {
    // A certificate leaves Expiring for RenewalInProgress only once its job exists.
    'every due certificate got a renewal job': () => left === 0 && expiring.total === 0,
  }, w.tags);
  if (left !== 0 || expiring.total !== 0) {
    console.error(say(`${due.total} certificates were due, ${created} Renewal jobs appeared; ${left} still Active, ${expiring.total} Expiring without a job ` +
      `(after ${w.scanMaxS} s at most)`));
  }

  // The job processor, from the last job's creation (certctl's clock; ours may differ by the poll).
  const lastCreated = jobs.first ? parseTime(jobs.first.created_at) : Date.now();
  const drainStarted = Date.now();
  let dispatched = false;
  while (Date.now() - drainStarted < w.drainMaxS * 1000) {
    const pending = page('/api/v1/jobs?type=Renewal&status=Pending&per_page=1', 'pending renewal jobs');
    if (!pending) return;
    if (pending.total === 0 && !dispatched) {
      dispatched = true;
      renewalDispatchMS.add(Date.now() - lastCreated);
      console.log(say(`every Renewal job out of Pending ${round((Date.now() - lastCreated) / 1000, 1)} s after the last was created`));
    }
    if (dispatched) {
      const running = page('/api/v1/jobs?type=Renewal&status=Running&per_page=1', 'running renewal jobs');
      if (!running) return;
      if (running.total === 0) {
        renewalDrainMS.add(Date.now() - lastCreated);
        renewalScanComplete.add(1);
        console.log(say(`every Renewal job processed (none Pending or Running) ${round((Date.now() - lastCreated) / 1000, 1)} s after the last was created`));
        return;
      }
    }
    sleep(1);
  }
  const why = `Renewal jobs still ${dispatched ? 'Running' : 'Pending'} ${w.drainMaxS} s after the scan`;
  if (w.drainJudged) fail(`the job processor drained the renewal jobs within ${w.drainMaxS} s`, why);
  else console.warn(say(why));
}
