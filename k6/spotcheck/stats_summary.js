// Spot check 1: API request handling on one hot read endpoint. 5 warm-up GET /api/v1/stats/summary
// (tagged phase:warmup, not in the figures), then 100 sequential GETs (phase:measured): mean, p50,
// p95, max. Baseline and guidance: k6/lib/spotchecks.json.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { defineSpotcheck, params, json, trendValues, round } from './lib/spotcheck.js';

const WARMUP = 5;
const MEASURED = 100;

const s = defineSpotcheck({
  name: 'stats_summary',
  iterations: WARMUP + MEASURED,
  latency: 'http_req_duration{phase:measured}',
  figures: (data) => {
    const v = trendValues(data, 'http_req_duration{phase:measured}');
    return { requests: v.count || 0, mean_ms: round(v.avg, 2), p50_ms: round(v.med, 2), p95_ms: round(v['p(95)'], 2), max_ms: round(v.max, 2) };
  },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function () {
  const phase = exec.scenario.iterationInTest < WARMUP ? 'warmup' : 'measured';
  const res = http.get(`${s.cfg.baseUrl}/api/v1/stats/summary`, params(s.cfg, { phase, name: 'GET /api/v1/stats/summary' }));
  check(res, {
    'stats summary: 200 with total_certificates': (r) => r.status === 200 && !!json(r) && typeof json(r).total_certificates === 'number',
  }, { phase });
}
