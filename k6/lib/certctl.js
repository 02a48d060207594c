// Request journeys against certctl's REST API (its quirks: docs/certctl-findings.md). Scenario files
// call these; they never build requests themselves.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { bulkRenewMatched, bulkRenewEnqueued, bulkRenewSkipped, bulkRenewFailed } from './metrics.js';

// Requests no budget judges (setup, clean-up, a follow-up) carry this header: the fault proxy (FAULT_*)
// passes them unfaulted, so a fault slows or breaks what is measured and nothing else.
export const UNTIMED_HEADER = 'X-Loadtest-Untimed';

// untimedHeaders(phase, headers) -> headers marked as untimed, for phase ('setup', 'cleanup', …).
export function untimedHeaders(phase, headers) {
  return Object.assign({}, headers || {}, { [UNTIMED_HEADER]: phase });
}

function auth(cfg, extra) {
  return Object.assign(
    { Authorization: `Bearer ${cfg.token}`, 'Content-Type': 'application/json' },
    extra || {},
  );
}

// requestParams(cfg, tags, expected): admin token, a tag set, the configured timeout; 200 is the
// expected answer unless told. A request of a phase no budget judges passes the fault proxy unfaulted.
const UNTIMED_PHASES = ['setup', 'cleanup', 'followup'];
export function requestParams(cfg, tags, expected) {
  const phase = tags && tags.phase;
  return {
    headers: UNTIMED_PHASES.includes(phase) ? untimedHeaders(phase, auth(cfg)) : auth(cfg),
    tags,
    timeout: cfg.requestTimeout,
    responseCallback: http.expectedStatuses(...(expected || [200])),
  };
}

// parseTime: milliseconds since the epoch of one of certctl's RFC 3339 timestamps, their fraction kept
// (they carry up to nanoseconds, more than Date.parse reads, and a renewal scan's per-certificate cost is
// a fraction of a millisecond); NaN for none.
export function parseTime(t) {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/.exec(String(t || ''));
  return m ? Date.parse(m[1] + m[3]) + (m[2] ? Number(m[2]) * 1000 : 0) : NaN;
}

export function json(res) {
  try {
    return res.json();
  } catch (_) {
    return null;
  }
}

// One new certificate per iteration. Names must be unique: a duplicate name is a 500 on certctl
// (docs/certctl-findings.md#create-500).
export function createCertificate(cfg) {
  const name = `lt-${cfg.runId}-${exec.scenario.iterationInTest}`;
  const body = {
    name,
    common_name: `${name}.loadtest.example.com`,
    issuer_id: cfg.ids.issuer,
    owner_id: cfg.ids.owner,
    team_id: cfg.ids.team,
    renewal_policy_id: cfg.ids.policy,
    environment: 'loadtest',
    tags: { harness: 'certctl-loadtest', run: cfg.runId },
  };
  const res = http.post(`${cfg.baseUrl}/api/v1/certificates`, JSON.stringify(body), {
    headers: auth(cfg),
    tags: { name: 'POST /api/v1/certificates' },
    timeout: cfg.requestTimeout,
    responseCallback: http.expectedStatuses(201),
  });
  check(res, {
    'create: status 201': (r) => r.status === 201,
    'create: body is the new Pending certificate': (r) => {
      const c = json(r);
      return !!c && c.name === name && typeof c.id === 'string' && /^pending$/i.test(c.status || '');
    },
  });
  return res;
}

export function listCertificates(cfg, perPage) {
  const res = http.get(`${cfg.baseUrl}/api/v1/certificates?per_page=${perPage}&page=1`, {
    headers: auth(cfg),
    tags: { name: 'GET /api/v1/certificates' },
    timeout: cfg.requestTimeout,
    responseCallback: http.expectedStatuses(200),
  });
  check(res, {
    'list: status 200': (r) => r.status === 200,
    'list: body is a page of certificates': (r) => {
      const p = json(r);
      return !!p && Array.isArray(p.data) && typeof p.total === 'number';
    },
  });
  return res;
}

// The dashboard's counts (GET /api/v1/stats/summary): certctl counts its tables on every call, so its
// cost follows the inventory.
export function statsSummary(cfg) {
  const res = http.get(`${cfg.baseUrl}/api/v1/stats/summary`, {
    headers: auth(cfg),
    tags: { name: 'GET /api/v1/stats/summary' },
    timeout: cfg.requestTimeout,
    responseCallback: http.expectedStatuses(200),
  });
  check(res, {
    'stats summary: 200 with total_certificates': (r) => r.status === 200 && !!json(r) && typeof json(r).total_certificates === 'number',
  });
  return res;
}

// An agent's work poll (GET /api/v1/agents/{id}/work), as certctl's agent sends it every 30 s: the
// deployment and CSR jobs waiting for it, found through the jobs, targets and mappings tables.
export function agentWork(cfg, agentID) {
  const res = http.get(`${cfg.baseUrl}/api/v1/agents/${agentID}/work`, {
    headers: auth(cfg),
    tags: { name: 'GET /api/v1/agents/{id}/work' },
    timeout: cfg.requestTimeout,
    responseCallback: http.expectedStatuses(200),
  });
  check(res, {
    'agent work: 200 with a count': (r) => r.status === 200 && !!json(r) && typeof json(r).count === 'number',
  });
  return res;
}

// The ids of every row whose name starts with prefix, read page by page through the API, so scenarios
// use what the seed really wrote (seed/*.sql is the one place that names them). collection is
// 'certificates' or 'agents'.
export function seededIDs(cfg, collection, prefix) {
  const ids = [];
  const p = { headers: untimedHeaders('setup', auth(cfg)), timeout: '30s', tags: { phase: 'setup' } };
  for (let page = 1; page < 10000; page++) {
    const res = http.get(`${cfg.baseUrl}/api/v1/${collection}?per_page=500&page=${page}`, p);
    if (res.status !== 200) throw new Error(`listing ${collection} (page ${page}) answered HTTP ${res.status}: ${String(res.body).slice(0, 200)}`);
    const body = res.json();
    for (const row of body.data || []) {
      if (String(row.name).indexOf(prefix) === 0) ids.push(row.id);
    }
    if (!body.data || body.data.length === 0 || page * body.per_page >= body.total) break;
  }
  return ids;
}

// What a bulk-renewal scenario records: certctl's totals, summed over the run.
export const BULK_RENEW_COUNTERS = Object.freeze({
  matched: bulkRenewMatched,
  enqueued: bulkRenewEnqueued,
  skipped: bulkRenewSkipped,
  failed: bulkRenewFailed,
});

// bulkRenew sends explicit ids: a filter matches at most 50 certificates per call
// (docs/certctl-findings.md#bulk-renew-filter-cap).
export function bulkRenew(cfg, ids) {
  const res = http.post(`${cfg.baseUrl}/api/v1/certificates/bulk-renew`, JSON.stringify({ certificate_ids: ids }), {
    headers: auth(cfg),
    tags: { name: 'POST /api/v1/certificates/bulk-renew' },
    timeout: cfg.requestTimeout,
    responseCallback: http.expectedStatuses(200),
  });
  const b = res.status === 200 ? json(res) : null;
  if (b) {
    BULK_RENEW_COUNTERS.matched.add(b.total_matched || 0);
    BULK_RENEW_COUNTERS.enqueued.add(b.total_enqueued || 0);
    BULK_RENEW_COUNTERS.skipped.add(b.total_skipped || 0);
    BULK_RENEW_COUNTERS.failed.add(b.total_failed || 0);
  }
  check(res, {
    'bulk-renew: 200 with totals': () => !!b && typeof b.total_matched === 'number' && typeof b.total_enqueued === 'number',
    'bulk-renew: every id matched': () => !!b && b.total_matched === ids.length,
  });
  return res;
}

export function heartbeat(cfg, agentID) {
  const res = http.post(`${cfg.baseUrl}/api/v1/agents/${agentID}/heartbeat`, JSON.stringify({ version: 'certctl-loadtest' }), {
    headers: auth(cfg),
    tags: { name: 'POST /api/v1/agents/{id}/heartbeat' },
    timeout: cfg.requestTimeout,
    responseCallback: http.expectedStatuses(200),
  });
  check(res, {
    'heartbeat: 200 heartbeat_recorded': (r) => r.status === 200 && !!json(r) && json(r).status === 'heartbeat_recorded',
  });
  return res;
}

// The agent CSR path (docs/certctl-findings.md#agent-csr-path): the one way the harness makes certctl
// really sign a certificate. Setup code only; each step throws a sentence on the first failure.
// params: request parameters for setup (tagged phase:setup, so no budget counts them).
export function setupParams(cfg) {
  return { headers: untimedHeaders('setup', auth(cfg)), timeout: '30s', tags: { phase: 'setup' }, responseCallback: http.expectedStatuses(200, 201, 202) };
}

// registerAgent: agents do not register themselves; the id is the server's.
export function registerAgent(cfg, name, p) {
  const agent = http.post(`${cfg.baseUrl}/api/v1/agents`, JSON.stringify({
    name, hostname: `${name}.loadtest.example.com`, os: 'linux', architecture: 'amd64', ip_address: '127.0.0.1', version: 'certctl-loadtest',
  }), p);
  if (agent.status !== 201) throw new Error(`registering agent ${name} answered HTTP ${agent.status}: ${String(agent.body).slice(0, 200)}`);
  return agent.json().id;
}

// issueWithCSR creates certificate `id` for csr.cn and has certctl sign csr.pem for it through the agent;
// returns the new certificate version (serial_number, pem_chain).
export function issueWithCSR(cfg, agentID, id, csr, p) {
  const created = http.post(`${cfg.baseUrl}/api/v1/certificates`, JSON.stringify({
    id, name: id, common_name: csr.cn, sans: [csr.cn], issuer_id: cfg.ids.issuer, owner_id: cfg.ids.owner,
    team_id: cfg.ids.team, renewal_policy_id: cfg.ids.policy, certificate_profile_id: cfg.ids.profile, environment: 'loadtest',
  }), p);
  if (created.status !== 201) throw new Error(`creating ${id} answered HTTP ${created.status}: ${String(created.body).slice(0, 200)}`);
  const signed = http.post(`${cfg.baseUrl}/api/v1/agents/${agentID}/csr`, JSON.stringify({ csr_pem: csr.pem, certificate_id: id }), p);
  if (signed.status !== 202) throw new Error(`the CSR for ${id} answered HTTP ${signed.status}: ${String(signed.body).slice(0, 200)}`);
  // certctl answers 202 even when the issuer is not loaded and nothing was signed: the version is the proof.
  const versions = http.get(`${cfg.baseUrl}/api/v1/certificates/${id}/versions`, p);
  const body = versions.status === 200 ? json(versions) : null;
  const v = body && body.data && body.data[0];
  if (!v || !v.pem_chain || !v.serial_number) throw new Error(`certctl accepted the CSR for ${id} but issued nothing (no certificate version): is issuer ${cfg.ids.issuer} enabled and loaded?`);
  return v;
}
