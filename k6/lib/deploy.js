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
import { json, parseTime, seededIDs, untimedHeaders } from './certctl.js';
import { probeCertctl } from './probe.js';
import {
  deployLoopMS, deploySignedMS, deployJobMS, deployServedMS, deployLoopOK,
  deployStolen, deployStuck, deployFailed, deployNotServed, deployNotSigned, deployCompleted,
  deployF5TokenLimit, deployEndpointJob, deployEndpointNoJob, deployMassMS, deployMassPerMin, deployMassOK, deployRetried, deployHandshakeFailed, deployWrongSerial,
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
    completed: deployCompleted, stolen: deployStolen, stuck: deployStuck, failed: deployFailed,
    not_served: deployNotServed, not_signed: deployNotSigned, f5_token_limit: deployF5TokenLimit,
  };
  const out = Object.assign({}, base);
  for (const [field, m] of Object.entries(base)) {
    for (const t of TYPES) out[`${field}_${t}`] = `${m.name}{target_type:${t}}`;
  }
  return Object.freeze(out);
})();

const POLL_S = 1;
const AGENT_POLL_S = 30;

export function deployConfig(env) {
  const e = env || __ENV;
  return Object.freeze({
    probeUrl: knob(e, 'DEPLOY_PROBE_URL').replace(/\/+$/, ''),
    // How long a Deployment job may sit before it counts as stolen: the agent's next poll is at most
    // 30 s away, a missed poll 30 s more, then the deployment itself.
    stuckAfterS: durationSeconds(knob(e, 'DEPLOY_STUCK_AFTER'), 'DEPLOY_STUCK_AFTER'),
    massCerts: positiveInt(knob(e, 'DEPLOY_MASS_CERTS'), 'DEPLOY_MASS_CERTS'),
    // A mass rotation is one iteration that DURATION bounds (maxDuration): a shorter run, a shorter deadline.
    massDeadlineS: Math.min(durationSeconds(knob(e, 'DEPLOY_MASS_DEADLINE'), 'DEPLOY_MASS_DEADLINE'),
      durationSeconds(knob(e, 'DURATION'), 'DURATION')),
  });
}

function positiveInt(v, name) {
  const n = /^[0-9]+$/.test(String(v)) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}=${v}: want a whole number above 0`);
  return n;
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

// claimedBy(cfg, job, from, to): who moved the job from Pending to Running between from and to (ms):
// 'agent' when certctl's audit trail has a work poll of its agent that could have claimed it
// (agentPolledAfter), 'processor' when it has none, '' when the trail cannot be read or the job names no
// agent. The trail is written as each request ends and read at whole seconds, so the window runs 3 s past
// the first sight of Running; certctl's `total` is the page's length
// (docs/certctl-findings.md#audit-total-is-page): pages are read until one comes back short.
export function claimedBy(cfg, job, from, to) {
  if (!job.agent_id) return '';
  const sec = (ms) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
  const p = { headers: untimedHeaders('followup', headers(cfg)), timeout: '60s', tags: { phase: 'followup', name: 'GET /api/v1/audit' } };
  const created = parseTime(job.created_at);
  if (isNaN(created)) return '';
  for (let page = 1; page < 100; page++) {
    const res = http.get(`${cfg.baseUrl}/api/v1/audit?since=${sec(from - 1000)}&until=${sec(to + 3000)}&per_page=500&page=${page}`, p);
    const body = res.status === 200 ? json(res) : null;
    const rows = body && body.data;
    if (!Array.isArray(rows)) return '';
    if (agentPolledAfter(rows, job.agent_id, created)) return 'agent';
    if (rows.length < 500) return 'processor';
  }
  return '';
}

// agentPolledAfter(rows, agentId, createdMS): whether certctl's audit rows hold a work poll of the agent
// recorded after the job was created. A poll claims only jobs that exist when it runs, and certctl records
// a request as it ends, so the poll that claimed a job ends after the job's creation. The poll that handed
// the agent its CSR job ended before the agent posted the CSR whose signing created the deployment job
// (certctl's agent answers a CSR job inside the poll, cmd/agent/poll.go): it is in the window from the job's
// creation less a second, and it claimed nothing (the full suite of 2026-12-06 read five stolen jobs as the
// agent's by that poll).
export function agentPolledAfter(rows, agentId, createdMS) {
  const work = `/api/v1/agents/${agentId}/work`;
  return rows.some((e) => String(e.resource_id || '').startsWith(work) && parseTime(e.timestamp) > createdMS);
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

// phaseJitter waits a random part of the agents' 30-second poll. A renewal's wait for the agent depends
// on where in the agent's poll cycle it lands; loops started at a fixed rate would land at the same
// phase every time and measure one point of that wait, not its spread.
export function phaseJitter() {
  sleep(Math.random() * AGENT_POLL_S);
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

// A failed deployment job, by its error: certctl's known F5 login leak, or a failure.
const F5_TOKEN_LIMIT = /maximum active login tokens/;
export function failedCounter(job) {
  return F5_TOKEN_LIMIT.test(String(job.last_error || '')) ? deployF5TokenLimit : deployFailed;
}

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
  // When it was last seen Pending and first seen Running: its claim is between the two.
  let pendingAt = job.status === 'Pending' ? Date.now() : parseTime(job.created_at);
  let runningAt = NaN;
  const done = waitFor(stuckAt, () => {
    last = getJob(cfg, job.id, tags) || last;
    if (last.status === 'Pending') pendingAt = Date.now();
    else if (isNaN(runningAt)) runningAt = Date.now();
    return DONE.includes(last.status) ? last : null;
  });
  const jobEnd = Date.now();
  if (!done) {
    // Still open past the agent's next polls. Stolen only with the defect's signature: it went Running
    // while its agent did not ask for work (certctl's job processor claims every Pending job and skips
    // the agent-routed ones without handing them back); else the agent took it and never finished, or
    // nothing took it.
    out.jobStatus = last.status;
    check(null, { 'deploy: the deployment job ran': () => false }, tags);
    const by = last.status === 'Running' && !isNaN(runningAt) ? claimedBy(cfg, last, pendingAt, runningAt) : '';
    out.claimedBy = by;
    return by === 'processor'
      ? fail(`deployment job Running after ${dcfg.stuckAfterS} s, claimed while its agent did not poll`, deployStolen)
      : fail(`deployment job ${last.status} after ${dcfg.stuckAfterS} s${by ? `, claimed by ${by}` : ''}`, deployStuck);
  }
  out.jobStatus = done.status;
  if (!check(done, { 'deploy: the deployment job ran': (j) => j.status === 'Completed' }, tags)) {
    return fail(`deployment job ${done.status}: ${done.last_error || ''}`, failedCounter(done));
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
  out.servedAttempts = seen.attempts;
  out.serialNorm = seen.serial;
  deployServedMS.add(Math.max(0, seen.seen_unix_ms - jobEnd), tags);
  deployLoopMS.add(seen.seen_unix_ms - t0, tags);
  deployLoopOK.add(ok ? 1 : 0, tags);
  out.ok = ok;
  out.outcome = ok ? 'served' : `served, chain does not verify: ${seen.verify_error}`;
  return out;
}

// deployPools (setup): each target type's seeded certificates (seed/deploy/bindings.sql names them
// lt-deploy-<type>-<n>), read through the API.
export function deployPools(cfg, seededIDs, dcfg) {
  if (dcfg) {
    // Without the probe no loop could be judged served: say so before any certificate is renewed.
    const res = http.get(`${dcfg.probeUrl}/healthz`, { timeout: '10s', tags: { name: 'probe /healthz' } });
    if (res.status !== 200) {
      throw new Error(`the TLS probe at DEPLOY_PROBE_URL=${dcfg.probeUrl} does not answer (${res.status || res.error}): is the tlsprobe service up?`);
    }
  }
  const pools = {};
  for (const t of TYPES) {
    pools[t] = seededIDs(cfg, 'certificates', `lt-deploy-${t}-`);
    if (pools[t].length === 0) {
      throw new Error(`no lt-deploy-${t}-* certificates: the deploy seed (seed/deploy/bindings.sql) has not run`);
    }
  }
  return pools;
}

// deployProbe: a deploy scenario's setup() probe. certctl answers, so does the TLS probe; each target
// type's seeded certificates and its target's id, what bounds the loop, and the scenario's own fields.
export function deployProbe(dcfg, extra) {
  return (cfg) => {
    const info = probeCertctl(cfg);
    const pools = deployPools(cfg, seededIDs, dcfg);
    const ids = targetIDsByName(cfg);
    const targets = {};
    for (const t of TYPES) {
      targets[t] = ids[`lt-deploy-${t}`];
      if (!targets[t]) throw new Error(`no target lt-deploy-${t}: fixtures/deploy/register.sh has not run`);
    }
    const out = Object.assign(info, deployFacts(dcfg), { target_types: TYPES.join(','), pools, targets });
    return Object.assign(out, extra ? extra(cfg, out) : {});
  };
}

// deployFacts: what bounds the loop, for the record (setup data): the job processor interval in force
// and how long a job may wait before it counts as stolen.
export function deployFacts(dcfg, env) {
  const e = env || __ENV;
  return {
    job_processor_interval: knob(e, 'CERTCTL_SCHEDULER_JOB_PROCESSOR_INTERVAL'),
    agent_poll_s: AGENT_POLL_S,
    stuck_after_s: dcfg.stuckAfterS,
  };
}


// --- Mass rotation: many certificates renewed at once, as after a CA incident. ---

// massPlan (setup): which certificates to renew, DEPLOY_MASS_CERTS spread evenly over the target types,
// each target's id (its Deployment jobs name it) and the serial it serves before the rotation.
export function massPlan(cfg, dcfg, pools, targets) {
  const per = Math.ceil(dcfg.massCerts / TYPES.length);
  const plan = { certs: {}, targets: {}, before: {} };
  for (const t of TYPES) {
    if (pools[t].length < per) {
      throw new Error(`DEPLOY_MASS_CERTS=${dcfg.massCerts} needs ${per} certificates per target and lt-deploy-${t} has ${pools[t].length}: raise DEPLOY_CERTS_PER_TARGET`);
    }
    plan.certs[t] = pools[t].slice(0, per);
    plan.targets[t] = targets[t];
    const s = served(dcfg, DEPLOY_TARGETS[t], null, 0, { target_type: t, phase: 'setup' });
    if (!s || !s.serial) throw new Error(`the probe cannot read what ${DEPLOY_TARGETS[t].addr} serves: ${s ? s.error : 'no answer'}`);
    plan.before[t] = s.serial;
  }
  return plan;
}

// targetIDsByName (setup): every target's id by its name.
export function targetIDsByName(cfg) {
  const res = http.get(`${cfg.baseUrl}/api/v1/targets?per_page=500`, { headers: headers(cfg), timeout: '30s', tags: { phase: 'setup' } });
  if (res.status !== 200) throw new Error(`listing targets answered HTTP ${res.status}`);
  const out = {};
  for (const row of (json(res) || {}).data || []) out[row.name] = row.id;
  return out;
}

// jobsSince: every job of type created at or after sinceMS, newest first as certctl lists them.
function jobsSince(cfg, type, sinceMS) {
  const out = [];
  for (let page = 1; page < 1000; page++) {
    const res = get(cfg, `/api/v1/jobs?type=${type}&per_page=500&page=${page}`, `GET /api/v1/jobs?type=${type}`, {});
    const body = res.status === 200 ? json(res) : null;
    if (!body) return null;
    const rows = body.data || [];
    let older = false;
    for (const j of rows) {
      if (parseTime(j.created_at) >= sinceMS - 1000) out.push(j);
      else older = true;
    }
    if (older || rows.length === 0 || page * body.per_page >= body.total) break;
  }
  return out;
}

const MASS_POLL_S = 5;

// massRotation renews every planned certificate at once (bulk renewal, explicit ids) and follows the
// jobs until each target has run all of its deployments and serves a new certificate, or the deadline.
// Per target type: renew → its last renewal signed, → its last deployment done, → a new certificate
// served (the probe: a serial other than the one before, whose chain verifies), and the whole.
export function massRotation(cfg, dcfg, plan) {
  const t0 = Date.now();
  const deadline = t0 + dcfg.massDeadlineS * 1000;
  const byTarget = {};
  const ids = [];
  for (const t of TYPES) {
    byTarget[plan.targets[t]] = t;
    ids.push(...plan.certs[t]);
  }
  let enqueued = 0;
  for (let i = 0; i < ids.length; i += 250) {
    const batch = ids.slice(i, i + 250);
    const res = http.post(`${cfg.baseUrl}/api/v1/certificates/bulk-renew`, JSON.stringify({ certificate_ids: batch }), {
      headers: headers(cfg), timeout: cfg.requestTimeout,
      tags: { name: 'POST /api/v1/certificates/bulk-renew' }, responseCallback: http.expectedStatuses(200),
    });
    const b = res.status === 200 ? json(res) : null;
    check(b, { 'mass: every certificate enqueued for renewal': (x) => !!x && x.total_enqueued === batch.length });
    enqueued += (b && b.total_enqueued) || 0;
  }
  const want = {};
  for (const t of TYPES) want[t] = plan.certs[t].length;
  const st = {};
  for (const t of TYPES) st[t] = { signedAt: 0, jobsAt: 0, servedAt: 0, signed: 0, completed: 0, failed: 0, tokenLimit: 0, retried: 0, open: 0, serial: '' };
  let lastCompletion = 0;
  let completedAll = 0;
  for (;;) {
    const renewals = jobsSince(cfg, 'Renewal', t0) || [];
    const deployments = jobsSince(cfg, 'Deployment', t0) || [];
    const now = Date.now();
    const signed = {};
    for (const j of renewals) {
      const t = typeOfCert(j.certificate_id);
      if (t && j.status === 'Completed') signed[t] = (signed[t] || 0) + 1;
    }
    const counts = {};
    for (const t of TYPES) counts[t] = { completed: 0, failed: 0, tokenLimit: 0, retried: 0, open: 0 };
    for (const j of deployments) {
      const t = byTarget[j.target_id];
      if (!t) continue;
      const c = counts[t];
      if (j.status === 'Completed') c.completed++;
      else if (j.status === 'Failed' || j.status === 'Cancelled') {
        if (failedCounter(j) === deployF5TokenLimit) c.tokenLimit++;
        else c.failed++;
      }
      else c.open++;
      if (j.attempts > 1) c.retried++;
    }
    let completedNow = 0;
    for (const t of TYPES) {
      const s = st[t];
      Object.assign(s, counts[t], { signed: signed[t] || 0 });
      completedNow += s.completed;
      if (!s.signedAt && (signed[t] || 0) >= want[t]) s.signedAt = now;
      if (!s.jobsAt && s.completed + s.failed + s.tokenLimit >= want[t]) s.jobsAt = now;
      if (s.jobsAt && !s.servedAt) {
        const seen = served(dcfg, DEPLOY_TARGETS[t], null, 0, { target_type: t });
        if (seen && seen.serial && seen.serial !== plan.before[t] && seen.verified) {
          s.servedAt = seen.seen_unix_ms || now;
          s.serial = seen.serial;
        }
      }
    }
    if (completedNow > completedAll) lastCompletion = now;
    completedAll = completedNow;
    if (TYPES.every((t) => st[t].servedAt) || now + MASS_POLL_S * 1000 > deadline) break;
    sleep(MASS_POLL_S);
  }

  let slowest = '';
  for (const t of TYPES) {
    const s = st[t];
    const tags = { target_type: t };
    deployCompleted.add(s.completed, tags);
    deployFailed.add(s.failed, tags);
    deployF5TokenLimit.add(s.tokenLimit, tags);
    deployRetried.add(s.retried, tags);
    // Still Pending or Running at the deadline: certctl never ran them (or not yet). Stuck: whether its
    // job processor or an agent took them, the rotation did not watch.
    deployStuck.add(s.open, tags);
    deployNotSigned.add(Math.max(0, want[t] - s.signed), tags);
    if (s.signedAt) deploySignedMS.add(s.signedAt - t0, tags);
    if (s.jobsAt && s.signedAt) deployJobMS.add(Math.max(0, s.jobsAt - s.signedAt), tags);
    if (s.servedAt) {
      deployServedMS.add(Math.max(0, s.servedAt - s.jobsAt), tags);
      deployLoopMS.add(s.servedAt - t0, tags);
      if (!slowest || s.servedAt > st[slowest].servedAt) slowest = t;
    } else {
      deployNotServed.add(1, tags);
    }
    deployMassOK.add(s.servedAt ? 1 : 0, tags);
    check(s, { 'mass: the target serves a new certificate whose chain verifies': (x) => !!x.servedAt }, tags);
  }
  const all = TYPES.every((t) => st[t].servedAt) ? Math.max(...TYPES.map((t) => st[t].servedAt)) - t0 : NaN;
  if (!Number.isNaN(all)) deployMassMS.add(all);
  if (lastCompletion > t0) deployMassPerMin.add(completedAll / ((lastCompletion - t0) / 60000));
  const line = TYPES.map((t) => `${t} ${st[t].servedAt ? ((st[t].servedAt - t0) / 1000).toFixed(1) + ' s' : 'not served'} (${st[t].completed} completed, ${st[t].failed + st[t].tokenLimit} failed, ${st[t].open} open)`).join('; ');
  console.log(`mass rotation of ${ids.length} certificates (${enqueued} enqueued): ${Number.isNaN(all) ? 'not every target served a new certificate' : `every target served a new one after ${(all / 1000).toFixed(1)} s, the slowest ${slowest}`}: ${line}`);
  return { st, all, slowest };

  function typeOfCert(id) {
    const m = /^lt-deploy-([a-z0-9]+)-\d+$/.exec(id);
    return m && want[m[1]] !== undefined ? m[1] : null;
  }
}

// --- Rotation under traffic: clients keep handshaking with every target while its certificate rotates. ---

// clientHandshake is one client's request to a target on a fresh connection (the scenario sets
// noConnectionReuse), its certificate verified against the run's CA like any client's: refused, reset
// or unverifiable counts as a failed handshake.
export function clientHandshake(cfg, type) {
  const target = DEPLOY_TARGETS[type];
  const tags = { target_type: type, name: `GET ${type} /` };
  const res = http.get(`https://${target.addr}/`, { tags, timeout: cfg.requestTimeout, responseCallback: http.expectedStatuses(200) });
  const ok = res.status === 200;
  if (!ok) deployHandshakeFailed.add(1, { target_type: type });
  check(res, { 'rotation: the client handshake and request succeeded': () => ok }, { target_type: type });
  return res;
}

// After certctl calls a deployment Completed, every handshake must get the new certificate: the ones the
// probe needed before the new serial answered, and a few more after it, must not show another.
const AFTER_SAMPLES = 8;

export function rotateAndWatch(cfg, dcfg, type, certId) {
  const out = renewAndFollow(cfg, dcfg, type, certId);
  if (!out.servedAttempts) return out;
  const tags = { target_type: type };
  let wrong = out.servedAttempts - 1;
  for (let i = 0; i < AFTER_SAMPLES; i++) {
    sleep(0.25);
    const s = served(dcfg, DEPLOY_TARGETS[type], null, 0, tags);
    if (!s || s.serial !== out.serialNorm) wrong++;
  }
  deployWrongSerial.add(wrong, tags);
  if (wrong > 0) console.warn(`rotation ${type} ${certId}: ${wrong} handshake(s) after the deployment was Completed got another certificate than ${out.serialNorm}`);
  check(wrong, { 'rotation: only the new certificate once the deployment is Completed': (w) => w === 0 }, tags);
  return out;
}

// redeploy asks certctl to deploy a certificate again to its target (POST /certificates/{id}/deploy,
// the API's own way to deploy) and looks for the deployment job it should create within 5 s.
export function redeploy(cfg, type, certId, targetId) {
  const tags = { target_type: type };
  const t0 = Date.now();
  const res = http.post(`${cfg.baseUrl}/api/v1/certificates/${certId}/deploy`, JSON.stringify({ target_id: targetId }), {
    headers: headers(cfg), timeout: cfg.requestTimeout,
    tags: Object.assign({ name: 'POST /api/v1/certificates/{id}/deploy' }, tags), responseCallback: http.expectedStatuses(202),
  });
  if (!check(res, { 'deploy endpoint: 202 Accepted': (r) => r.status === 202 }, tags)) return null;
  const job = waitFor(Date.now() + 5000, () => findJob(cfg, 'Deployment', certId, t0, tags));
  (job ? deployEndpointJob : deployEndpointNoJob).add(1, tags);
  return job;
}
