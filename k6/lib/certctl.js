// Request journeys against certctl's REST API (FACTS.md §3). Scenario files call these; they never
// build requests themselves.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';

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

// One new certificate per iteration. Names must be unique: a duplicate name is a 500 on certctl.
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
