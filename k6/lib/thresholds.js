// Thresholds are data (thresholds.json); this module only scopes them to a scenario so that setup()
// requests, which carry no scenario tag, never count against a budget.
const budgets = JSON.parse(open('./thresholds.json'));

// Sub-metrics a summary needs even when no threshold names them (k6 only keeps the sub-metrics that
// thresholds mention; an empty list records one without judging it).
const RECORDED = ['http_reqs', 'iterations', 'http_req_duration', 'http_req_failed', 'dropped_iterations'];

const ARRIVAL_RATE = ['constant-arrival-rate', 'ramping-arrival-rate'];

export function budgetNames() {
  return Object.keys(budgets).filter((k) => !k.startsWith('_'));
}

export function budgetFor(name) {
  const b = budgets[name];
  if (!b) {
    throw new Error(`no budget named "${name}" in k6/lib/thresholds.json (known: ${budgetNames().join(', ')})`);
  }
  return b;
}

// scoped('http_req_duration{endpoint:directory}', 'acme_flow') -> 'http_req_duration{endpoint:directory,scenario:acme_flow}'
export function scoped(selector, scenario) {
  const m = /^([A-Za-z0-9_]+)(?:\{(.*)\})?$/.exec(selector);
  if (!m) throw new Error(`malformed metric selector "${selector}" in k6/lib/thresholds.json`);
  const tags = m[2] ? m[2].split(',').map((t) => t.trim()).filter(Boolean) : [];
  if (tags.some((t) => t.startsWith('scenario:'))) {
    throw new Error(`"${selector}" names a scenario itself; thresholds.js adds it`);
  }
  tags.push(`scenario:${scenario}`);
  return `${m[1]}{${tags.join(',')}}`;
}

// thresholdsFor(budget, scenario, executor) -> k6 `thresholds` option.
export function thresholdsFor(budget, scenario, executor) {
  const b = budgetFor(budget);
  const out = {};
  for (const metric of RECORDED) out[scoped(metric, scenario)] = [];
  for (const [selector, exprs] of Object.entries(b)) {
    if (!Array.isArray(exprs) || exprs.length === 0) {
      throw new Error(`budget "${budget}": "${selector}" needs a non-empty list of expressions`);
    }
    out[scoped(selector, scenario)] = exprs.slice();
  }
  // An arrival-rate scenario that cannot start its iterations on time delivers a lighter load and
  // still looks fast; without this threshold it would pass.
  if (ARRIVAL_RATE.includes(executor) && !(b.dropped_iterations || []).includes('count==0')) {
    throw new Error(`budget "${budget}" runs ${executor} but has no dropped_iterations: ["count==0"]`);
  }
  return out;
}
