// Thresholds are data (thresholds.json); this module only scopes them to a scenario so that setup()
// requests, which carry no scenario tag, never count against a budget. A budget must be able to fail
// for each reason a run can be wrong: a body check (checks), a lighter load than asked
// (dropped_iterations, arrival-rate executors), a metric that exists (knownMetric).
import { knownMetric } from './metrics.js';

const budgets = JSON.parse(open('./thresholds.json'));

// Sub-metrics a summary needs even when no threshold names them (k6 only keeps the sub-metrics that
// thresholds mention; an empty list records one without judging it). The record's latency figures are
// the successful requests' (expected_response:true, scoped below).
const RECORDED = ['http_reqs', 'iterations', 'iteration_duration', 'http_req_duration', 'http_req_failed', 'dropped_iterations'];

// A failed request's timings are not certctl's latency: a refused connection takes 0 ms, so during an
// outage every percentile falls and a latency budget would hold. k6 tags every HTTP sample with
// expected_response; latency budgets judge the successful ones, and http_req_failed the rest.
const SUCCESS_ONLY = ['http_req_duration', 'http_req_waiting', 'http_req_sending', 'http_req_receiving',
  'http_req_connecting', 'http_req_tls_handshaking', 'http_req_blocked'];

const ARRIVAL_RATE = ['constant-arrival-rate', 'ramping-arrival-rate'];

// Metrics k6 emits per scenario, not per request: a request tag such as target_type never reaches them.
const SCENARIO_LEVEL = ['dropped_iterations', 'iterations', 'iteration_duration', 'vus', 'vus_max'];

export function budgetNames(table) {
  return Object.keys(table || budgets).filter((k) => !k.startsWith('_'));
}

// budgetFor(name): the budget's metrics and expressions, after its `_extends` (a shared budget whose
// metrics it inherits and may override one by one). table: thresholds.json unless a test gives one.
export function budgetFor(name, table, seen) {
  const t = table || budgets;
  const b = t[name];
  if (!b) {
    throw new Error(`no budget named "${name}" in k6/lib/thresholds.json (known: ${budgetNames(t).join(', ')})`);
  }
  const chain = (seen || []).concat(name);
  if (b._extends && chain.includes(b._extends)) throw new Error(`budget "${name}" extends itself through ${chain.concat(b._extends).join(' → ')}`);
  const out = b._extends ? budgetFor(b._extends, t, chain) : {};
  for (const [k, v] of Object.entries(b)) if (!k.startsWith('_')) out[k] = v;
  return out;
}

// scoped('http_req_duration{endpoint:directory}', 'acme_flow') -> 'http_req_duration{endpoint:directory,scenario:acme_flow}'
// tags ({ target_type: 'nginx' }) are added to every request-level metric.
export function scoped(selector, scenario, tags) {
  const m = /^([A-Za-z0-9_]+)(?:\{(.*)\})?$/.exec(selector);
  if (!m) throw new Error(`malformed metric selector "${selector}" in k6/lib/thresholds.json`);
  const parts = m[2] ? m[2].split(',').map((t) => t.trim()).filter(Boolean) : [];
  if (parts.some((t) => t.startsWith('scenario:'))) {
    throw new Error(`"${selector}" names a scenario itself; thresholds.js adds it`);
  }
  if (!SCENARIO_LEVEL.includes(m[1])) {
    for (const [k, v] of Object.entries(tags || {})) {
      if (!parts.some((t) => t.startsWith(`${k}:`))) parts.push(`${k}:${v}`);
    }
  }
  if (SUCCESS_ONLY.includes(m[1]) && !parts.some((t) => t.startsWith('expected_response:'))) parts.push('expected_response:true');
  parts.push(`scenario:${scenario}`);
  return `${m[1]}{${parts.join(',')}}`;
}

// thresholdsFor(budget, scenario, executor, tags, table) -> k6 `thresholds` option.
export function thresholdsFor(budget, scenario, executor, tags, table) {
  const b = budgetFor(budget, table);
  const out = {};
  for (const metric of RECORDED) out[scoped(metric, scenario)] = [];
  // Every request's duration too, failed ones included: the summary's figures are the successful ones'.
  out[`http_req_duration{scenario:${scenario}}`] = [];
  for (const [selector, exprs] of Object.entries(b)) {
    knownMetric(selector, `budget "${budget}" (k6/lib/thresholds.json)`);
    if (!Array.isArray(exprs) || exprs.length === 0) {
      throw new Error(`budget "${budget}": "${selector}" needs a non-empty list of expressions`);
    }
    out[scoped(selector, scenario, tags)] = exprs.slice();
  }
  // A check that fails on every response (a wrong body, a wrong TLS version) changes no status code
  // and no latency: only a checks threshold fails the run for it.
  if (!Object.keys(b).some((sel) => /^checks(\{|$)/.test(sel))) {
    throw new Error(`budget "${budget}" has no checks threshold: a body check failing every time would still pass`);
  }
  // An arrival-rate scenario that cannot start its iterations on time delivers a lighter load and
  // still looks fast; without this threshold it would pass.
  if (ARRIVAL_RATE.includes(executor) && !(b.dropped_iterations || []).includes('count==0')) {
    throw new Error(`budget "${budget}" runs ${executor} but has no dropped_iterations: ["count==0"]`);
  }
  return out;
}

// withAbort(thresholds, '30s'): each judged expression in k6's object form, ending the run once it fails
// from 30 s into the load on (the warm-up is never judged); '' leaves them as they are. A capacity step
// whose budget broke has its verdict: loading on would only cost the machine's time.
export function withAbort(thresholds, delay) {
  if (!delay) return thresholds;
  const out = {};
  for (const [metric, exprs] of Object.entries(thresholds)) {
    out[metric] = exprs.map((e) => (typeof e === 'string' ? { threshold: e, abortOnFail: true, delayAbortEval: delay } : e));
  }
  return out;
}
