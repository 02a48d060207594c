// Deploy tier journey: renew a certificate bound to a target, follow certctl's jobs, and see the target
// serve the new certificate. certctl marks a job Completed; only a TLS handshake with the target (the
// probe, cmd/tlsprobe) says the new serial is what clients get, and with the chain that verifies.
//
// The loop and its clocks (docs/deploy.md): POST renew → the Renewal job waits (AwaitingCSR) for the
// agent's next 30-second poll → the agent makes a key and CSR, certctl signs → a Deployment job for the
// agent → the agent's next poll, 30 s later → files written, reload → served.
import http from 'k6/http';
import { check, sleep } from 'k6';
import { knob, durationSeconds } from './config.js';
import { json } from './certctl.js';
import {
  deployLoopMS, deploySignedMS, deployJobMS, deployServedMS, deployLoopOK,
  deployStolen, deployFailed, deployNotServed, deployNotSigned, deployCompleted,
} from './metrics.js';

// The four target types: the host certctl's certificate names, and where the probe finds its TLS.
export const DEPLOY_TARGETS = Object.freeze({
  nginx: { host: 'deploy-nginx', addr: 'deploy-nginx:443' },
  apache: { host: 'deploy-apache', addr: 'deploy-apache:443' },
  haproxy: { host: 'deploy-haproxy', addr: 'deploy-haproxy:443' },
  // The F5 stand-in's virtual server, which serves the profile certctl's F5 connector updates.
  f5: { host: 'f5', addr: 'f5:8443' },
});
export const TYPES = Object.freeze(Object.keys(DEPLOY_TARGETS));

// What a deploy scenario records per target type: the loop and each stage.
export function deployTrends() {
  const out = {};
  for (const t of TYPES) {
    out[`loop_${t}`] = `${deployLoopMS.name}{target_type:${t}}`;
    out[`signed_${t}`] = `${deploySignedMS.name}{target_type:${t}}`;
    out[`job_${t}`] = `${deployJobMS.name}{target_type:${t}}`;
    out[`served_${t}`] = `${deployServedMS.name}{target_type:${t}}`;
  }
  return out;
}

// The loops' outcomes, in all and per target type (completed_nginx, stolen_f5, ...).
export const DEPLOY_COUNTERS = (() => {
  const base = {
    completed: deployCompleted, stolen: deployStolen, failed: deployFailed,
    not_served: deployNotServed, not_signed: deployNotSigned,
  };
  const out = Object.assign({}, base);
  for (const [field, m] of Object.entries(base)) {
    for (const t of TYPES) out[`${field}_${t}`] = `${m.name}{target_type:${t}}`;
  }
  return Object.freeze(out);
})();

const POLL_S = 1;

export function deployConfig(env) {
  const e = env || __ENV;
  return Object.freeze({
    probeUrl: knob(e, 'DEPLOY_PROBE_URL').replace(/\/+$/, ''),
    // How long a Deployment job may sit before it counts as stolen: the agent's next poll is at most
    // 30 s away, a missed poll 30 s more, then the deployment itself.
    stuckAfterS: durationSeconds(knob(e, 'DEPLOY_STUCK_AFTER'), 'DEPLOY_STUCK_AFTER'),
  });
}

function headers(cfg) {
  return { Authorization: `Bearer ${cfg.token}`, 'Content-Type': 'application/json' };
}

function get(cfg, path, name, tags) {
  return http.get(`${cfg.baseUrl}${path}`, {
    headers: headers(cfg), timeout: cfg.requestTimeout,
    tags: Object.assign({ name }, tags), responseCallback: http.expectedStatuses(200),
  });
}

// certctl's timestamps carry nanoseconds; Date.parse wants milliseconds at most.
export function parseTime(s) {
  if (!s) return NaN;
  return Date.parse(String(s).replace(/(\.\d{3})\d+/, '$1'));
}

// findJob: the newest job of type for the certificate created at or after sinceMS (a second of slack:
// certctl's clock and k6's are the same host's, its timestamps truncated).
function findJob(cfg, type, certId, sinceMS, tags) {
  const res = get(cfg, `/api/v1/jobs?type=${type}&per_page=100`, `GET /api/v1/jobs?type=${type}`, tags);
  const page = res.status === 200 ? json(res) : null;
  for (const j of (page && page.data) || []) {
    if (j.certificate_id === certId && parseTime(j.created_at) >= sinceMS - 1000) return j;
  }
  return null;
}

function getJob(cfg, id, tags) {
  const res = get(cfg, `/api/v1/jobs/${id}`, 'GET /api/v1/jobs/{id}', tags);
  return res.status === 200 ? json(res) : null;
}

// latestVersion: the certificate's newest version (serial, when it was signed).
function latestVersion(cfg, certId, tags) {
  const res = get(cfg, `/api/v1/certificates/${certId}/versions`, 'GET /api/v1/certificates/{id}/versions', tags);
  const body = res.status === 200 ? json(res) : null;
  const rows = Array.isArray(body) ? body : (body && body.data) || [];
  let best = null;
  for (const v of rows) {
    if (!best || parseTime(v.created_at) > parseTime(best.created_at)) best = v;
  }
  return best;
}

// served asks the probe what the target serves, waiting up to timeoutS for want when given.
export function served(dcfg, target, want, timeoutS, tags) {
  let url = `${dcfg.probeUrl}/served?addr=${encodeURIComponent(target.addr)}&name=${encodeURIComponent(target.host)}`;
  if (want) url += `&want=${encodeURIComponent(want)}&timeout=${timeoutS}s&interval=250ms`;
  const res = http.get(url, {
    timeout: `${(timeoutS || 0) + 15}s`, tags: Object.assign({ name: 'probe /served' }, tags),
    responseCallback: http.expectedStatuses(200),
  });
  return res.status === 200 ? json(res) : null;
}

// waitFor polls fn every second until it returns something or deadlineMS passes.
function waitFor(deadlineMS, fn) {
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() + POLL_S * 1000 > deadlineMS) return null;
    sleep(POLL_S);
  }
}

const DONE = ['Completed', 'Failed', 'Cancelled'];

// renewAndFollow is one loop for one certificate bound to target type `type`. It returns what it saw
// (for the scenarios that build on it) and records the stages and the outcome.
export function renewAndFollow(cfg, dcfg, type, certId) {
  const target = DEPLOY_TARGETS[type];
  const tags = { target_type: type };
  const out = { type, certId, ok: false, outcome: '' };
  const fail = (outcome, counter) => {
    out.outcome = outcome;
    // The run's log says which loop broke where; the counters only say how many.
    console.warn(`deploy ${type} ${certId}: ${outcome}`);
    if (counter) counter.add(1, tags);
    deployLoopOK.add(0, tags);
    return out;
  };
  const t0 = Date.now();
  const res = http.post(`${cfg.baseUrl}/api/v1/certificates/${certId}/renew`, null, {
    headers: headers(cfg), timeout: cfg.requestTimeout,
    tags: Object.assign({ name: 'POST /api/v1/certificates/{id}/renew' }, tags),
    responseCallback: http.expectedStatuses(202),
  });
  if (!check(res, { 'deploy: renewal accepted (202)': (r) => r.status === 202 }, tags)) return fail('renewal refused');

  // The Renewal job, then its end: the agent's CSR signed (or not).
  const signedBy = t0 + 2 * 30000 + 30000;
  const renewal = waitFor(signedBy, () => findJob(cfg, 'Renewal', certId, t0, tags));
  const ended = renewal && waitFor(signedBy, () => {
    const j = getJob(cfg, renewal.id, tags);
    return j && DONE.includes(j.status) ? j : null;
  });
  const version = ended && ended.status === 'Completed' ? latestVersion(cfg, certId, tags) : null;
  const signedAt = version ? parseTime(version.created_at) : NaN;
  if (!check(version, { 'deploy: the renewal was signed (a new version)': (v) => !!v && signedAt >= t0 - 1000 }, tags)) {
    return fail(renewal ? `renewal job ${ended ? ended.status : 'not finished'}` : 'no renewal job', deployNotSigned);
  }
  out.serial = String(version.serial_number || version.serial || '');
  deploySignedMS.add(Math.max(0, signedAt - t0), tags);

  // The Deployment job certctl creates on signing, for the target's agent.
  const job = waitFor(Date.now() + 15000, () => findJob(cfg, 'Deployment', certId, signedAt, tags));
  if (!check(job, { 'deploy: a deployment job follows the signing': (j) => !!j }, tags)) return fail('no deployment job', deployFailed);
  out.jobId = job.id;
  const stuckAt = parseTime(job.created_at) + dcfg.stuckAfterS * 1000;
  let last = job;
  const done = waitFor(stuckAt, () => {
    last = getJob(cfg, job.id, tags) || last;
    return DONE.includes(last.status) ? last : null;
  });
  const jobEnd = Date.now();
  if (!done) {
    // Still Pending or Running past the agent's next polls: certctl's job processor claimed it (it
    // claims every Pending job and skips agent-routed ones without handing them back).
    out.jobStatus = last.status;
    check(null, { 'deploy: the deployment job ran': () => false }, tags);
    return fail(`deployment job ${last.status} after ${dcfg.stuckAfterS} s`, deployStolen);
  }
  out.jobStatus = done.status;
  if (!check(done, { 'deploy: the deployment job ran': (j) => j.status === 'Completed' }, tags)) {
    return fail(`deployment job ${done.status}: ${done.last_error || ''}`, deployFailed);
  }
  deployJobMS.add(Math.max(0, jobEnd - signedAt), tags);
  deployCompleted.add(1, tags);

  // Served: the probe handshakes until the new serial answers.
  const seen = served(dcfg, target, out.serial, 30, tags);
  const ok = check(seen, {
    'deploy: the target serves the new serial': (s) => !!s && s.matched === true,
    'deploy: the served chain verifies to the run CA': (s) => !!s && s.matched === true && s.verified === true,
  }, tags);
  if (!seen || !seen.matched) return fail('new serial not served', deployNotServed);
  out.servedAt = seen.seen_unix_ms;
  deployServedMS.add(Math.max(0, seen.seen_unix_ms - jobEnd), tags);
  deployLoopMS.add(seen.seen_unix_ms - t0, tags);
  deployLoopOK.add(ok ? 1 : 0, tags);
  out.ok = ok;
  out.outcome = ok ? 'served' : `served, chain does not verify: ${seen.verify_error}`;
  return out;
}

// deployPools (setup): each target type's seeded certificates (seed/deploy/bindings.sql names them
// lt-deploy-<type>-<n>), read through the API.
export function deployPools(cfg, seededIDs) {
  const pools = {};
  for (const t of TYPES) {
    pools[t] = seededIDs(cfg, 'certificates', `lt-deploy-${t}-`);
    if (pools[t].length === 0) {
      throw new Error(`no lt-deploy-${t}-* certificates: the deploy seed (seed/deploy/bindings.sql) has not run`);
    }
  }
  return pools;
}

// deployFacts: what bounds the loop, for the record (setup data): the job processor interval in force
// and how long a job may wait before it counts as stolen.
export function deployFacts(dcfg, env) {
  const e = env || __ENV;
  return {
    job_processor_interval: knob(e, 'CERTCTL_SCHEDULER_JOB_PROCESSOR_INTERVAL'),
    agent_poll_s: 30,
    stuck_after_s: dcfg.stuckAfterS,
  };
}

