// Shared part of the operator spot checks (k6/spotcheck/*.js): one VU, shared iterations, thresholds
// from k6/lib/spotchecks.json, one record per check. Not a tier: `loadtest spotcheck` runs these one
// after another (latency measurements, not load); `loadtest run` never sees them.
//
// spec: { name, iterations, latency: selector of the Trend behind latency_ms (e.g.
//         'http_req_duration{phase:measured}'), recorded: selectors kept in the summary without a
//         threshold, probe?: (cfg) => setup data (default: probe certctl),
//         figures: (data) => { name: number } the check's own figures, from the end-of-test data,
//         counters?: { record_field: 'k6_counter' } }
import { loadConfig } from '../../lib/config.js';
import { probeCertctl } from '../../lib/probe.js';
import { RECORD_SCHEMA, thresholdResults, scalars, num, round, latencyOf } from '../../lib/summary.js';
import { guardedSetup } from '../../lib/scenario.js';
import { knownMetric } from '../../lib/metrics.js';

const SPOTCHECKS = JSON.parse(open('../../lib/spotchecks.json'));
const TREND_STATS = ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max', 'count'];

export function spotcheckSpec(name) {
  const s = SPOTCHECKS[name];
  if (!s || !s.thresholds) throw new Error(`no spot check "${name}" with thresholds in k6/lib/spotchecks.json`);
  return s;
}

// Request parameters: certctl.js's, under the name the checks use.
export { requestParams as params } from '../../lib/certctl.js';
export { json } from '../../lib/certctl.js';
export { round } from '../../lib/summary.js';

export function trendValues(data, selector) {
  const m = data.metrics[selector];
  return (m && m.values) || {};
}

export function countOf(data, selector) {
  const v = trendValues(data, selector);
  return num(v.count !== undefined ? v.count : v.passes);
}


export function defineSpotcheck(spec, env) {
  const cfg = loadConfig(env || __ENV);
  const baseline = spotcheckSpec(spec.name);
  const thresholds = {};
  // k6 keeps a sub-metric only when a threshold names it: an empty list records it without judging.
  const recorded = ['http_reqs{phase:measured}', 'http_req_failed{phase:measured}', spec.latency].concat(spec.recorded || []);
  for (const sel of recorded) {
    knownMetric(sel, `spot check ${spec.name}`);
    thresholds[sel] = [];
  }
  for (const [sel, exprs] of Object.entries(baseline.thresholds)) {
    knownMetric(sel, `spot check ${spec.name} (k6/lib/spotchecks.json)`);
    // A baseline of a part the run leaves out (bulk_revoke's ways) would judge no sample and fail.
    if (spec.judges && !spec.judges(sel)) continue;
    thresholds[sel] = exprs.slice();
  }
  for (const sel of Object.values(spec.counters || {})) knownMetric(typeof sel === 'string' ? sel : sel.name, `spot check ${spec.name}`);
  const options = {
    scenarios: { [spec.name]: { executor: 'shared-iterations', vus: 1, iterations: spec.iterations, maxDuration: '10m' } },
    thresholds,
    summaryTrendStats: TREND_STATS,
    setupTimeout: '300s',
  };
  const probe = spec.probe || probeCertctl;
  return {
    cfg,
    options,
    setup: guardedSetup(spec.name, probe, cfg),
    handleSummary: (data) => {
      const rec = record(data, spec, baseline, cfg);
      const text = JSON.stringify(rec, null, 2) + '\n';
      // spotchecks/ is the spot check's own record; scenarios/ is the copy `loadtest report` reads
      // (same schema as a scenario's). k6 creates neither directory: `loadtest spotcheck` does.
      return {
        [`${cfg.resultsDir}/spotchecks/${spec.name}.json`]: text,
        [`${cfg.resultsDir}/scenarios/${spec.name}.json`]: text,
        stdout: renderSpotcheck(rec) + '\n',
      };
    },
  };
}

function record(data, spec, baseline, cfg) {
  const thresholds = thresholdResults(data);
  const seconds = num(data.state && data.state.testRunDurationMs) / 1000;
  const iterations = countOf(data, 'iterations');
  const counters = {};
  for (const [field, m] of Object.entries(spec.counters || {})) counters[field] = countOf(data, typeof m === 'string' ? m : m.name);
  const failed = data.metrics[`http_req_failed{phase:measured}`];
  return {
    schema: RECORD_SCHEMA,
    scenario: spec.name,
    tier: 'spotcheck',
    executor: 'shared-iterations',
    duration_s: round(seconds),
    target_rate_per_s: 0,
    achieved_rate_per_s: seconds > 0 ? round(iterations / seconds) : 0,
    iterations,
    dropped_iterations: 0,
    requests: countOf(data, 'http_reqs{phase:measured}'),
    error_rate: round(failed && failed.values.rate, 6),
    latency_metric: spec.latency,
    latency_ms: latencyOf(trendValues(data, spec.latency)),
    thresholds,
    thresholds_ok: thresholds.every((t) => t.ok),
    vus: { pre_allocated: 1, max: 1 },
    test_run_duration_s: round(seconds),
    setup: scalars(data.setup_data),
    counters,
    // The check's own figures, the baseline it was held to, and where to look when it is worse.
    spotcheck: {
      title: baseline.title,
      figures: data.setup_data ? spec.figures(data) : {},
      baseline: baseline.thresholds,
      if_worse: baseline.if_worse,
    },
  };
}

export function renderSpotcheck(rec) {
  if (!rec.setup) return `${rec.scenario}: setup failed, nothing was measured (the reason is logged above)`;
  const figures = Object.entries(rec.spotcheck.figures).map(([k, v]) => `${k} ${v}`).join(', ');
  const failed = rec.thresholds.filter((t) => !t.ok).map((t) => `${t.metric} ${t.expression}`);
  return `${rec.scenario}: ${figures} — ` + (failed.length ? `FAILED: ${failed.join('; ')}` : 'baseline held');
}
