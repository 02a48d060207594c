// Turns a scenario file's load shape and budget name into everything k6 needs: options, setup and
// handleSummary. Scenario files stay a few lines long.
//
// spec: { name, tier, budget, load: { executor, rate, timeUnit = '1s', preAllocatedVUs, maxVUs,
//                                    startTime = '0s': when the load starts, after setup },
//         options?  extra k6 options (e.g. noConnectionReuse),
//         probe?    (cfg) => setup data; default: probe certctl,
//         latencyMetric?  the Trend behind the record's latency figures (a k6/lib/metrics.js symbol or
//                   a k6 built-in's name); default http_req_duration,
//         trends?   { record_field: metric } recorded per scenario besides it,
//         counters? { record_field: metric } whose per-scenario counts the record carries,
//         budgetTags? tags added to the budget's request-level metrics (e.g. { target_type: 'nginx' }),
//         labels?   fields copied into the record as they are (e.g. target_type) }
// A metric is a k6/lib/metrics.js symbol or the name of a k6 built-in; any other name fails at init.
// A constant-vus load is { executor: 'constant-vus', vus }: it cannot drop iterations, so its budget
// carries no dropped_iterations threshold. A per-vu-iterations load is { executor: 'per-vu-iterations',
// vus, iterations }: an event (a mass rotation) rather than a rate; DURATION bounds it (maxDuration).
import exec from 'k6/execution';
import { loadConfig } from './config.js';
import { thresholdsFor, withAbort } from './thresholds.js';
import { knownMetric } from './metrics.js';
import { probeCertctl } from './probe.js';
import { scenarioRecord, renderLine, timeUnitSeconds, recordKey } from './summary.js';

// p(99) is not in k6's default set.
const TREND_STATS = ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max', 'count'];

// guardedSetup: a setup that throws would print a stack trace and exit 107; abort says why in one
// sentence, and handleSummary still writes the record.
export function guardedSetup(name, probe, cfg, resultsBytes) {
  return () => {
    const short = diskShortfall(name, resultsBytes || 0, cfg);
    if (short) return exec.test.abort(short);
    const failed = (e) => exec.test.abort(`setup of ${name} failed: ${e && e.message ? e.message : e}`);
    try {
      const out = probe(cfg);
      // An async probe (WebCrypto's calls are promises) rejects instead of throwing.
      return out && typeof out.then === 'function' ? out.catch(failed) : out;
    } catch (e) {
      return failed(e);
    }
  };
}

// What a scenario writes: its raw samples, measured at 420 bytes per acme_flow iteration (three
// requests) gzipped, so 1 KiB per iteration is a margin; and its dashboard, record and log, under 1 MiB.
// A constant-VU scenario has no rate: 10 iterations per VU and second bounds acme_burst's on our
// machines.
const RAW_BYTES_PER_ITERATION = 1024;
const BYTES_PER_SCENARIO = 1 << 20;
const ITERATIONS_PER_VU_SECOND = 10;

// resultsBytes(k6 scenario, seconds) -> the bytes its results take at most, about.
export function resultsBytes(sc, seconds) {
  const perSecond = sc.executor === 'constant-vus' ? sc.vus * ITERATIONS_PER_VU_SECOND
    : sc.executor === 'per-vu-iterations' ? sc.vus * sc.iterations / Math.max(1, seconds)
    : sc.rate / timeUnitSeconds(sc.timeUnit);
  return Math.ceil(perSecond * seconds) * RAW_BYTES_PER_ITERATION + BYTES_PER_SCENARIO;
}

// diskShortfall: a sentence when the run's scenarios, each needing about `need`, would not fit in the
// free space the harness measured; null otherwise. Checked in setup(), before any load: a full disk
// mid-run loses the records of every scenario.
export function diskShortfall(name, need, cfg) {
  if (!cfg.resultsFreeBytes || !need) return null;
  const all = need * cfg.runScenarios;
  if (all <= cfg.resultsFreeBytes) return null;
  const mb = (b) => `${Math.ceil(b / (1 << 20))} MB`;
  return `not enough disk space for the results: ${name} writes about ${mb(need)} in ${cfg.duration}, ${cfg.runScenarios} scenario(s) about ${mb(all)}, ` +
    `and RESULTS_DIR has ${mb(cfg.resultsFreeBytes)} free: free some space, point RESULTS_DIR elsewhere or shorten DURATION`;
}

// segment: the execution segment this k6 process runs (--execution-segment), or null when it runs the
// whole load. Its id names its files: LT_SEGMENT (loadtest's "2of4", or a k6-operator runner's pod
// name), else the segment itself made safe for a file name.
export function segment(cfg) {
  const o = exec.test.options || {};
  const seg = String(o.executionSegment || '');
  if (!seg || seg === '0:1') return null;
  const id = cfg.segmentId || seg.replace(/[^0-9A-Za-z.-]+/g, '_');
  return { segment: seg, sequence: String(o.executionSegmentSequence || ''), id };
}

// metricOf: a spec's metric (symbol or built-in name) as a name k6 knows.
export function metricOf(m, where) {
  return knownMetric(typeof m === 'string' ? m : (m && m.name) || String(m), where);
}

// selectorOf: a spec's metric as metricOf names it, keeping a tag filter it was given
// ('deploy_loop_ms{target_type:nginx}'): a record may carry one metric's figures per tag value.
export function selectorOf(m, where) {
  const sel = typeof m === 'string' ? m : (m && m.name) || String(m);
  knownMetric(sel, where);
  return sel;
}

// resolveMetrics: the spec with every metric it names turned into a checked name.
function resolveMetrics(spec) {
  const where = `scenario ${spec.name}`;
  const byField = (o) => Object.fromEntries(Object.entries(o || {}).map(([f, m]) => [f, selectorOf(m, where)]));
  return Object.assign({}, spec, {
    latencyMetric: spec.latencyMetric ? metricOf(spec.latencyMetric, where) : undefined,
    trends: byField(spec.trends),
    counters: byField(spec.counters),
  });
}

export function defineScenario(specIn, env) {
  const spec = resolveMetrics(specIn);
  const cfg = loadConfig(env || __ENV);
  const load = spec.load;
  const maxVUs = cfg.maxVUs || load.maxVUs;
  const k6scenario = load.executor === 'constant-vus'
    ? { executor: load.executor, vus: cfg.maxVUs || cfg.vusFor(spec.name, load.vus), duration: cfg.duration, gracefulStop: '15s' }
    : load.executor === 'per-vu-iterations'
    ? { executor: load.executor, vus: load.vus, iterations: load.iterations, maxDuration: cfg.duration, gracefulStop: load.gracefulStop || '15s' }
    : {
      executor: load.executor,
      rate: cfg.rateFor(spec.name, load.rate),
      timeUnit: cfg.unitFor(spec.name, load.timeUnit || '1s'),
      duration: cfg.duration,
      preAllocatedVUs: Math.min(cfg.preVUs || load.preAllocatedVUs, maxVUs),
      maxVUs,
      // An iteration that lasts minutes (a deploy loop waits for the agents' polls) needs as long to
      // finish once the duration is up, or the last loops are cut off unrecorded.
      gracefulStop: load.gracefulStop || '15s',
    };
  if (load.startTime) k6scenario.startTime = load.startTime;
  const thresholds = thresholdsFor(spec.budget, spec.name, load.executor, spec.budgetTags);
  const recorded = Object.values(spec.trends || {}).concat(spec.latencyMetric || [], Object.values(spec.counters || {}));
  for (const metric of recorded) {
    const key = recordKey(metric, spec.name);
    if (!thresholds[key]) thresholds[key] = [];
  }
  const options = Object.assign({}, spec.options || {}, {
    scenarios: { [spec.name]: k6scenario },
    thresholds: withAbort(thresholds, cfg.abortAfter),
    summaryTrendStats: TREND_STATS,
    setupTimeout: '60s',
  });
  const probe = spec.probe || probeCertctl;
  return {
    cfg,
    options,
    setup: guardedSetup(spec.name, probe, cfg, resultsBytes(k6scenario, cfg.durationSeconds)),
    handleSummary: (data) => {
      const seg = segment(cfg);
      const rec = scenarioRecord(data, spec, Object.assign({ segment: seg }, k6scenario), cfg);
      // One process of several: its record goes beside the others', for the merge.
      const file = seg ? `segments/${spec.name}@${seg.id}.json` : `${spec.name}.json`;
      return {
        [`${cfg.resultsDir}/scenarios/${file}`]: JSON.stringify(rec, null, 2) + '\n',
        stdout: renderLine(rec) + '\n',
      };
    },
  };
}
