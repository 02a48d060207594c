// fleet_rotation: a fleet of agents and targets (DEPLOY_FLEET_AGENTS × DEPLOY_FLEET_TARGETS, one
// certificate bound to each target) rotated at its real rotation rate (one renewal per certificate every
// DEPLOY_FLEET_ROTATION_DAYS), compressed DEPLOY_FLEET_COMPRESSION times into the run.
//
// The load renews fleet certificates at that rate and does not wait: certctl and the fleet's agents
// carry the loops, and k6 adds no polling of its own to certctl's load. Once the load ends, teardown
// waits for the loops under way to settle, then reads every fleet job from certctl and judges each
// renewal by certctl's own clock: from the renewal job's creation (the request) to the agent's report
// that the deployment completed. certctl never sets a job's started_at or completed_at
// (docs/certctl-findings.md#job-times-unset): the report's time is its audit event's
// (`job_status_reported`). The same times give the backlog: the fleet jobs open at each 10-second point.
import http from 'k6/http';
import { check, sleep } from 'k6';
import exec from 'k6/execution';
import { knob, durationSeconds } from './config.js';
import { json, seededIDs, untimedHeaders } from './certctl.js';
import { probeCertctl } from './probe.js';
import { round } from './summary.js';
import {
  fleetLoopMS, fleetSignedMS, fleetDeployed, fleetBacklog, fleetRenewals, fleetNotSigned, fleetFailed, fleetStuck,
} from './metrics.js';

const PREFIX = 'lt-fleet-';
const SETTLE_POLL_S = 5;
const BACKLOG_STEP_S = 10;
const AGENT_POLL_S = 30;

export function fleetConfig(env) {
  const e = env || __ENV;
  const num = (name) => {
    const v = Number(knob(e, name));
    if (!(v > 0) || !Number.isFinite(v)) throw new Error(`${name}=${knob(e, name)}: want a number above 0`);
    return v;
  };
  const agents = Math.round(num('DEPLOY_FLEET_AGENTS'));
  const targets = Math.round(num('DEPLOY_FLEET_TARGETS'));
  const days = num('DEPLOY_FLEET_ROTATION_DAYS');
  const certs = agents * targets;
  // k6 takes a whole rate: renewals a minute, at least one; the compression is what that rounding gives.
  const perMin = Math.max(1, Math.round(certs * num('DEPLOY_FLEET_COMPRESSION') / (days * 1440)));
  return Object.freeze({
    agents, targets, certs, days, perMin,
    compression: perMin * days * 1440 / certs,
    // The fleet a real 1× rotation at this rate would be: renewals a day × days between rotations.
    equivalentFleet: perMin * 1440 * days,
    // After the load: a loop started last needs up to two agent polls, and a stuck job is one past
    // DEPLOY_STUCK_AFTER.
    settleS: durationSeconds(knob(e, 'DEPLOY_STUCK_AFTER'), 'DEPLOY_STUCK_AFTER') + AGENT_POLL_S,
    stuckAfterS: durationSeconds(knob(e, 'DEPLOY_STUCK_AFTER'), 'DEPLOY_STUCK_AFTER'),
  });
}

// fleetProbe (setup): certctl answers, and the fleet's certificates are there, as many as the fleet.
export function fleetProbe(fcfg) {
  return (cfg) => {
    const info = probeCertctl(cfg);
    const certs = seededIDs(cfg, 'certificates', PREFIX);
    if (certs.length !== fcfg.certs) {
      throw new Error(`the fleet has ${certs.length} certificates, want ${fcfg.certs} (DEPLOY_FLEET_AGENTS × DEPLOY_FLEET_TARGETS): fleet-register or fleet-seed did not run`);
    }
    return Object.assign(info, {
      certs, fleet_agents: fcfg.agents, fleet_targets: fcfg.certs, rotation_days: fcfg.days,
      renewals_per_min: fcfg.perMin, compression: round(fcfg.compression, 1), equivalent_fleet: Math.round(fcfg.equivalentFleet),
      job_processor_interval: knob(__ENV, 'CERTCTL_SCHEDULER_JOB_PROCESSOR_INTERVAL'), agent_poll_s: AGENT_POLL_S,
      started_ms: Date.now(),
    });
  };
}

function headers(cfg, phase) {
  const h = { Authorization: `Bearer ${cfg.token}`, 'Content-Type': 'application/json' };
  return phase ? untimedHeaders(phase, h) : h;
}

// fleetRenew: the next certificate of the fleet, in turn, renewed; the loop is certctl's and the agent's.
export function fleetRenew(cfg, data) {
  const id = data.certs[exec.scenario.iterationInTest % data.certs.length];
  const res = http.post(`${cfg.baseUrl}/api/v1/certificates/${id}/renew`, null, {
    headers: headers(cfg), timeout: cfg.requestTimeout,
    tags: { name: 'POST /api/v1/certificates/{id}/renew' }, responseCallback: http.expectedStatuses(202),
  });
  if (check(res, { 'fleet: renewal accepted (202)': (r) => r.status === 202 })) fleetRenewals.add(1);
  else console.warn(`fleet: renewal of ${id} answered HTTP ${res.status}: ${String(res.body).slice(0, 200)}`);
}

// certctl's timestamps carry nanoseconds; Date.parse wants milliseconds at most.
function ms(s) {
  return s ? Date.parse(String(s).replace(/(\.\d{3})\d+/, '$1')) : NaN;
}

// fleetJobs: the fleet's jobs of type created since sinceMS, newest first, read page by page (certctl
// lists jobs newest first and cannot filter by certificate: docs/certctl-findings.md#jobs-list-in-memory).
function fleetJobs(cfg, type, sinceMS) {
  const out = [];
  const p = { headers: headers(cfg, 'followup'), timeout: '60s', tags: { phase: 'followup', name: `GET /api/v1/jobs?type=${type}` } };
  for (let page = 1; page < 1000; page++) {
    const res = http.get(`${cfg.baseUrl}/api/v1/jobs?type=${type}&per_page=500&page=${page}`, p);
    const body = res.status === 200 ? json(res) : null;
    if (!body) throw new Error(`listing ${type} jobs (page ${page}) answered HTTP ${res.status}: ${String(res.body).slice(0, 200)}`);
    const rows = body.data || [];
    let older = false;
    for (const j of rows) {
      if (ms(j.created_at) < sinceMS - 1000) older = true;
      else if (String(j.certificate_id).indexOf(PREFIX) === 0) out.push(j);
    }
    if (older || rows.length === 0 || page * 500 >= body.total) break;
  }
  return out;
}

const OPEN = ['Pending', 'Running', 'AwaitingCSR', 'AwaitingApproval'];
const ENDED = ['Completed', 'Failed', 'Cancelled'];

function rfc3339(t) {
  return new Date(t).toISOString().replace(/\.\d+Z$/, 'Z');
}

// reportedEnds: job id → certctl's time of the agent's report that the job ended (Completed, Failed),
// from the audit events between sinceMS and untilMS (newest first; the window is fixed, so the pages
// do not shift while the agents go on polling, each poll an audit event of its own). certctl's `total`
// is the page's length, not the window's (docs/certctl-findings.md#audit-total-is-page): read until a
// page comes back short.
function reportedEnds(cfg, sinceMS, untilMS) {
  const out = {};
  const p = { headers: headers(cfg, 'followup'), timeout: '60s', tags: { phase: 'followup', name: 'GET /api/v1/audit' } };
  const window = `since=${rfc3339(sinceMS - 1000)}&until=${rfc3339(untilMS + 1000)}`;
  for (let page = 1; page < 10000; page++) {
    const res = http.get(`${cfg.baseUrl}/api/v1/audit?${window}&per_page=500&page=${page}`, p);
    const body = res.status === 200 ? json(res) : null;
    if (!body) throw new Error(`listing audit events (page ${page}) answered HTTP ${res.status}: ${String(res.body).slice(0, 200)}`);
    const rows = body.data || [];
    for (const e of rows) {
      const status = e.details && e.details.status;
      if (e.action === 'job_status_reported' && ENDED.includes(status)) {
        const at = ms(e.timestamp);
        if (!out[e.resource_id] || at < out[e.resource_id]) out[e.resource_id] = at;
      }
    }
    if (rows.length < 500) break;
  }
  return out;
}

// pair: each renewal with the first deployment job of its certificate created after it.
function pair(renewals, deployments) {
  const byCert = {};
  for (const d of deployments) (byCert[d.certificate_id] = byCert[d.certificate_id] || []).push(d);
  for (const list of Object.values(byCert)) list.sort((a, b) => ms(a.created_at) - ms(b.created_at));
  return renewals.map((r) => {
    const t = ms(r.created_at);
    const d = (byCert[r.certificate_id] || []).find((j) => ms(j.created_at) >= t - 1000) || null;
    return { r, d };
  });
}

// fleetSettle (teardown): waits for the fleet's open loops to end (at most settleS), then records
// each renewal's outcome and loop, and the backlog over time, tagged with the scenario (teardown's
// samples carry none, and the budget is the scenario's).
export function fleetSettle(cfg, fcfg, data, scenario) {
  const tags = { scenario };
  const since = data.started_ms;
  const deadline = Date.now() + fcfg.settleS * 1000;
  let pairs;
  let open;
  for (;;) {
    pairs = pair(fleetJobs(cfg, 'Renewal', since), fleetJobs(cfg, 'Deployment', since));
    open = pairs.filter(({ r, d }) => OPEN.includes(r.status) || (r.status === 'Completed' && (!d || OPEN.includes(d.status)))).length;
    if (open === 0 || Date.now() + SETTLE_POLL_S * 1000 > deadline) break;
    sleep(SETTLE_POLL_S);
  }
  const end = Date.now();
  // A run none of whose renewals reached certctl deployed nothing: say so, or the budget on
  // fleet_deployed would judge no sample and pass.
  if (pairs.length === 0) {
    fleetDeployed.add(0, tags);
    console.warn('fleet: no renewal of the fleet reached certctl: nothing was deployed');
  }
  const ends = reportedEnds(cfg, since, end);
  const outcomes = { deployed: 0, not_signed: 0, failed: 0, stuck: 0 };
  const intervals = [];
  let unreported = 0;
  for (const { r, d } of pairs) {
    const t0 = ms(r.created_at);
    // A renewal job ends when its CSR is signed, which creates the deployment job.
    intervals.push([t0, d ? ms(d.created_at) : end]);
    const reported = d ? ends[d.id] : undefined;
    if (d) intervals.push([ms(d.created_at), reported || end]);
    let outcome;
    if (r.status !== 'Completed') outcome = 'not_signed';
    else if (!d || d.status === 'Failed' || d.status === 'Cancelled') outcome = 'failed';
    else if (d.status !== 'Completed') outcome = 'stuck';
    else outcome = 'deployed';
    outcomes[outcome]++;
    fleetDeployed.add(outcome === 'deployed' ? 1 : 0, tags);
    if (d) fleetSignedMS.add(Math.max(0, ms(d.created_at) - t0), tags);
    if (outcome === 'deployed' && reported) fleetLoopMS.add(Math.max(0, reported - t0), tags);
    else if (outcome === 'deployed') unreported++;
    else if (outcome === 'not_signed') fleetNotSigned.add(1, tags);
    else if (outcome === 'failed') fleetFailed.add(1, tags);
    else fleetStuck.add(1, tags);
    if (outcome !== 'deployed') {
      console.warn(`fleet: ${r.certificate_id} renewed at ${r.created_at}: ${outcome} (renewal ${r.status}` +
        `${d ? `, deployment ${d.status}${d.last_error ? `: ${d.last_error}` : ''}` : ', no deployment job'})`);
    }
  }
  // The backlog: open fleet jobs at each step, from the first renewal to the end of the wait.
  const points = [];
  const openAt = (t) => intervals.filter(([a, b]) => a <= t && t < b).length;
  for (let t = since; t < end; t += BACKLOG_STEP_S * 1000) points.push(openAt(t));
  points.push(openAt(end));
  for (const n of points) fleetBacklog.add(n, tags);
  if (unreported) console.warn(`fleet: ${unreported} deployments Completed with no job_status_reported audit event: no loop time for them`);
  const peak = Math.max(0, ...points);
  console.log(`fleet_rotation: ${pairs.length} renewals of ${fcfg.certs} certificates on ${fcfg.agents} agents at ${fcfg.perMin} a minute ` +
    `(${fcfg.days}-day rotation compressed ${round(fcfg.compression, 1)}×, the rate of a ${Math.round(fcfg.equivalentFleet)}-certificate fleet in real time): ` +
    `${outcomes.deployed} deployed, ${outcomes.not_signed} not signed, ${outcomes.failed} failed, ${outcomes.stuck} stuck; ` +
    `backlog peak ${peak} open jobs, ${points[points.length - 1] || 0} at the end`);
  console.log(`fleet_rotation: open fleet jobs every ${BACKLOG_STEP_S} s from the start of the load, and at the end: ${points.join(' ')}`);
  // Tagged: among a run's renewal checks these two would be too few to move the checks rate.
  check(null, {
    'fleet: every loop ended within the wait after the load': () => open === 0,
    // Without it a deployed loop has no time, and the loop budget would judge the others only.
    'fleet: every completed deployment has its report in the audit trail': () => unreported === 0,
  }, Object.assign({ phase: 'settle' }, tags));
}
