// handleSummary's half of the results: one JSON record per scenario, written by the k6 process that ran
// it. `loadtest report` merges the records of a run into summary.json and renders summary.txt; nothing
// else writes those files.

export const RECORD_SCHEMA = 'certctl-loadtest/scenario@1';

function metric(data, name, scenario) {
  return data.metrics[recordKey(name, scenario)] || null;
}

// recordKey('deploy_loop_ms{target_type:nginx}', 'deploy_latency') ->
// 'deploy_loop_ms{target_type:nginx,scenario:deploy_latency}': the sub-metric a record reads, as
// defineScenario asks k6 to keep it. A bare name gets the scenario tag alone.
export function recordKey(selector, scenario) {
  const m = /^([A-Za-z0-9_]+)(?:\{(.*)\})?$/.exec(selector);
  const tags = m && m[2] ? m[2].split(',').map((t) => t.trim()).filter(Boolean) : [];
  return `${m ? m[1] : selector}{${tags.concat(`scenario:${scenario}`).join(',')}}`;
}

export function num(v) {
  return typeof v === 'number' && isFinite(v) ? v : 0;
}

export function round(v, digits) {
  const f = Math.pow(10, digits === undefined ? 3 : digits);
  return Math.round(num(v) * f) / f;
}

function latency(trend) {
  return latencyOf((trend && trend.values) || {});
}

// latencyOf(values of a Trend) -> the record's latency figures, ms.
export function latencyOf(v) {
  return {
    avg: round(v.avg, 3),
    min: round(v.min, 3),
    p50: round(v.med, 3),
    p90: round(v['p(90)'], 3),
    p95: round(v['p(95)'], 3),
    p99: round(v['p(99)'], 3),
    max: round(v.max, 3),
  };
}

// Every threshold of the run, with its expression, the value it judged and its verdict, in a stable
// order. value is absent when the metric had no sample (the threshold judged nothing). A trend or a
// rate with no sample has no percentile or rate to judge: k6 reports its threshold as held (a p(95)
// of 0 ms when no ACME order succeeded), the record says no_sample and does not pass it. A counter
// with no sample counted nothing, which its threshold judges (no iteration dropped is count 0).
export function thresholdResults(data) {
  const out = [];
  for (const name of Object.keys(data.metrics).sort()) {
    const m = data.metrics[name];
    const t = m.thresholds;
    if (!t) continue;
    const values = m.values || {};
    const empty = (m.type === 'trend' && !(values.count > 0)) ||
      (m.type === 'rate' && !((values.passes || 0) + (values.fails || 0) > 0));
    for (const expr of Object.keys(t).sort()) {
      const r = { metric: name, expression: expr, ok: t[expr].ok === true };
      if (empty) {
        Object.assign(r, { ok: false, no_sample: true });
        out.push(r);
        continue;
      }
      const agg = thresholdAggregate(expr);
      const v = thresholdValue(values, expr);
      if (v !== null) Object.assign(r, { aggregate: agg, value: round(v, 3) });
      // A rate's samples, true and false: how many failures a known defect's signature accounts for is
      // counted against them (internal/defects).
      if (m.type === 'rate') Object.assign(r, { passes: num(values.passes), fails: num(values.fails) });
      out.push(r);
    }
  }
  return out;
}

// thresholdAggregate('p(95)<800') -> 'p(95)': what a threshold expression judges; null if unknown.
export function thresholdAggregate(expr) {
  const m = /^\s*(p\(\d+(?:\.\d+)?\)|avg|min|max|med|count|rate|value)\s*[<>=!]/.exec(expr);
  return m ? m[1] : null;
}

// thresholdValue(values, 'p(95)<800') -> values['p(95)']: the value a threshold expression judged.
export function thresholdValue(values, expr) {
  const agg = thresholdAggregate(expr);
  const v = agg ? values[agg] : undefined;
  return typeof v === 'number' && isFinite(v) ? v : null;
}

// loadSeconds is how long the load ran: the configured duration, or the whole run's time when that is
// shorter (the run was cut short; setup's few seconds are counted in, k6 reports no more).
export function loadSeconds(data, configured) {
  const ran = num(data.state && data.state.testRunDurationMs) / 1000;
  return ran > 0 && ran < configured ? ran : configured;
}

export function scenarioRecord(data, spec, k6scenario, cfg) {
  const name = spec.name;
  // Counters have a count; for a Rate, what is counted is its true samples (e.g. 5xx responses).
  const count = (m) => {
    const v = metric(data, m, name) && metric(data, m, name).values;
    return num(v && (v.count !== undefined ? v.count : v.passes));
  };
  const iterations = count('iterations');
  const failed = metric(data, 'http_req_failed', name);
  const thresholds = thresholdResults(data);
  const seconds = cfg.durationSeconds;
  const okLatency = spec.latencyMetric ? metric(data, spec.latencyMetric, name)
    : data.metrics[`http_req_duration{expected_response:true,scenario:${name}}`] || null;
  const trends = {};
  for (const [field, m] of Object.entries(spec.trends || {})) trends[field] = latency(metric(data, m, name));
  const counters = {};
  for (const [field, m] of Object.entries(spec.counters || {})) counters[field] = count(m);
  return Object.assign({
    schema: RECORD_SCHEMA,
    scenario: name,
    tier: spec.tier,
    executor: k6scenario.executor,
    duration_s: seconds,
    // constant-vus scenarios have no target rate: 0, and achieved is what the VUs managed.
    target_rate_per_s: k6scenario.rate ? k6scenario.rate / timeUnitSeconds(k6scenario.timeUnit) : 0,
    // The unit the rate is set in: every view shows the rate in it (per minute for the connector tier).
    rate_unit: k6scenario.rate ? k6scenario.timeUnit || '1s' : '',
    // Iterations per second of the load: the configured duration, or the time the run lasted when it
    // was cut short (interrupted, a stack fault), which cut_short says; an arrival-rate run that kept
    // up shows the target here.
    achieved_rate_per_s: round(iterations / loadSeconds(data, seconds), 3),
    iterations,
    dropped_iterations: count('dropped_iterations'),
    requests: count('http_reqs'),
    error_rate: round(failed && failed.values.rate, 6),
    // Successful requests only (thresholds.js): a failed request's 0 ms is not certctl answering fast.
    latency_metric: spec.latencyMetric || 'http_req_duration{expected_response:true}',
    latency_ms: latency(okLatency),
    latency_samples: num(okLatency && okLatency.values && okLatency.values.count),
    // One whole iteration (every request of the journey, and its checks): what a VU is busy for.
    iteration_ms: latency(metric(data, 'iteration_duration', name)),
    thresholds,
    thresholds_ok: thresholds.every((t) => t.ok),
    vus: { pre_allocated: k6scenario.preAllocatedVUs || k6scenario.vus, max: k6scenario.maxVUs || k6scenario.vus },
    test_run_duration_s: round(num(data.state && data.state.testRunDurationMs) / 1000, 3),
    cut_short: loadSeconds(data, seconds) < seconds || undefined,
    setup: scalars(data.setup_data),
    // The metric behind each figure: a merge of execution segments recomputes the figures from the
    // segments' raw samples (internal/segments), and needs to know which samples made which figure.
    sources: {
      latency: recordKey(spec.latencyMetric || 'http_req_duration{expected_response:true}', name),
      iteration: recordKey('iteration_duration', name),
      error_rate: recordKey('http_req_failed', name),
      trends: Object.fromEntries(Object.entries(spec.trends || {}).map(([f, m]) => [f, recordKey(m, name)])),
    },
  }, segmentOf(k6scenario), spec.labels || {}, Object.keys(trends).length ? { trends_ms: trends } : {},
  Object.keys(counters).length ? { counters } : {});
}

// segmentOf: which part of the load this process ran, when it ran one (k6 --execution-segment): its
// record is then one of several that `loadtest` merges into the scenario's.
export function segmentOf(k6scenario) {
  const seg = k6scenario && k6scenario.segment;
  if (!seg || seg.segment === '0:1' || seg.segment === '') return {};
  return { segment: seg.segment, segment_sequence: seg.sequence || '', segment_id: seg.id };
}

// setup() data can hold thousands of ids for the VUs; the record keeps its scalar facts only.
export function scalars(d) {
  if (!d) return null;
  const out = {};
  for (const [k, v] of Object.entries(d)) {
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) out[k] = v;
    else if (Array.isArray(v)) out[`${k}_count`] = v.length;
  }
  return out;
}

// timeUnitSeconds('1m') -> 60: an arrival-rate scenario's timeUnit in seconds.
export function timeUnitSeconds(unit) {
  const m = /^(\d+)?(ms|s|m|h)$/.exec(unit || '1s');
  const n = m && m[1] ? parseInt(m[1], 10) : 1;
  return n * ({ ms: 0.001, s: 1, m: 60, h: 3600 }[m ? m[2] : 's']);
}

// rateText: the achieved rate against the target in the scenario's own unit, as the Go reports print it
// (results.Record.RateCells): per minute where the rate is set per minute, VUs for a closed model.
export function rateText(rec) {
  const r = (v) => (Number.isInteger(v) ? String(v) : v < 0.1 ? v.toFixed(2) : v.toFixed(1));
  if (rec.rate_unit === '1m') {
    return `${r(round(rec.achieved_rate_per_s * 60, 3))}/min of ${r(round(rec.target_rate_per_s * 60, 3))}/min`;
  }
  if (!rec.target_rate_per_s) return `${r(rec.achieved_rate_per_s)}/s with ${rec.vus.max} VU${rec.vus.max === 1 ? '' : 's'}`;
  return `${r(rec.achieved_rate_per_s)}/s of ${r(rec.target_rate_per_s)}/s`;
}

export function renderLine(rec) {
  if (!rec.setup) return `${rec.scenario}: setup failed, no load was generated (the reason is logged above)`;
  const l = rec.latency_ms;
  const failed = rec.thresholds.filter((t) => !t.ok).map((t) => `${t.metric} ${t.expression}`);
  return (
    `${rec.scenario}: ${rec.requests} requests, ${rateText(rec)}, ` +
    `dropped ${rec.dropped_iterations}, errors ${(rec.error_rate * 100).toFixed(2)} %, ` +
    (rec.latency_samples === 0 && rec.requests > 0 ? 'no successful request to time — ' : `p95 ${l.p95} ms, p99 ${l.p99} ms — `) +
    (failed.length ? `FAILED: ${failed.join('; ')}` : 'thresholds ok')
  );
}
