// Request journeys against certctl's REST API (its quirks: docs/certctl-findings.md). Scenario files
// call these; they never build requests themselves.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';

function auth(cfg, extra) {
  return Object.assign(
    { Authorization: `Bearer ${cfg.token}`, 'Content-Type': 'application/json' },
    extra || {},
  );
}

function json(res) {
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

// The ids of every row whose name starts with prefix, read page by page through the API, so scenarios
// use what the seed really wrote (seed/*.sql is the one place that names them). collection is
// 'certificates' or 'agents'.
export function seededIDs(cfg, collection, prefix) {
  const ids = [];
  const p = { headers: auth(cfg), timeout: '30s', tags: { phase: 'setup' } };
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

const bulkTotals = {
  matched: new Counter('bulk_renew_matched'),
  enqueued: new Counter('bulk_renew_enqueued'),
  skipped: new Counter('bulk_renew_skipped'),
  failed: new Counter('bulk_renew_failed'),
};

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
    bulkTotals.matched.add(b.total_matched || 0);
    bulkTotals.enqueued.add(b.total_enqueued || 0);
    bulkTotals.skipped.add(b.total_skipped || 0);
    bulkTotals.failed.add(b.total_failed || 0);
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
