// Unit tests of k6/lib, run by k6 itself: make test-k6.
import { eq, truthy, throws, guarded } from './assert.js';
import { durationSeconds, loadConfig } from '../lib/config.js';
import { scoped, thresholdsFor, budgetNames, budgetFor, withAbort } from '../lib/thresholds.js';
import { scenarioRecord, thresholdResults, renderLine, rateText, RECORD_SCHEMA } from '../lib/summary.js';
import { ariCertID } from '../lib/der.js';
import { syntheticARIID } from '../lib/acme.js';
import { knownMetric, customNames } from '../lib/metrics.js';
import { metricOf, resultsBytes, diskShortfall } from '../lib/scenario.js';
import { untimedHeaders, UNTIMED_HEADER, parseTime } from '../lib/certctl.js';
import { recordKey } from '../lib/summary.js';
import { thumbprintInput, thumbprint, newAccountKey, jws, p256JWK } from '../lib/jose.js';
import { tlv, ecdsaSigDER, csrDER, newCSRPem, certNames, signedBy, pemBlocks, readTLV, children } from '../lib/der.js';
import encoding from 'k6/encoding';
import { ocspRequest, parseOCSP, ocspVerified, saneTimes, parseCRL, crlVerified } from '../lib/ocsp.js';
import { deployTrends, deployConfig, failedCounter, agentPolledAfter, TYPES, DEPLOY_COUNTERS } from '../lib/deploy.js';
import { inShare, serialStartsWithZero, slowVUs, ACME_SATURATION_COUNTERS, ACME_SATURATION_TRENDS } from '../lib/pki.js';

// A P-256 CA and an RSA CA, each with a leaf for leaf.example.com (+ www.): made with openssl.
const PKI = Object.fromEntries(['ec-ca', 'ec-leaf', 'rsa-ca', 'rsa-leaf', 'rsa-leaf-revoked', 'ocsp-responder'].map((n) => [n, open(`./testdata/pki/${n}.pem`)]));
// openssl ocsp's answers for rsa-leaf (good), rsa-leaf-revoked (revoked) and serial 0x1234 (unknown),
// signed by ocsp-responder (which rsa-ca signed); its request for rsa-leaf; openssl ca's CRL of rsa-ca.
const PKI_DER = Object.fromEntries(['ocsp-good', 'ocsp-revoked', 'ocsp-unknown', 'ocsp-request-openssl'].map((n) => [n, new Uint8Array(open(`./testdata/pki/${n}.der`, 'b'))]));
PKI_DER.crl = new Uint8Array(open('./testdata/pki/rsa-ca.crl', 'b'));
const GOOD_SERIAL = '1ffbc84ad30befb747a5088a0a801f981ead5213';
const REVOKED_SERIAL = '1ffbc84ad30befb747a5088a0a801f981ead5214';

// A leaf certctl 151107c issued through the agent CSR path; its ARI id checked with openssl.
const ARI_LEAF = open('./testdata/ari-leaf.pem');
// openssl req -x509 -set_serial 0x0a1b…, 0x8a1b… and 0x008a1b… (40 hex digits each; the DER integers of
// the last two carry a 0x00 sign byte).
const SERIAL_0A = open('./testdata/serial-0a.pem');
const SERIAL_8A = open('./testdata/serial-8a.pem');
const SERIAL_008A = open('./testdata/serial-008a.pem');

// ASSERTIONS is how many assertions the functions below make when each runs to its end: a function cut
// short by an exception, or one whose loop lost its cases, fails the count (add yours here).
const ASSERTIONS = 730;

export const options = {
  iterations: 1,
  vus: 1,
  thresholds: { checks: ['rate==1'], assertions: [`count==${ASSERTIONS}`] },
};

const EXPR = /^(p\(\d+(\.\d+)?\)|avg|min|max|med|rate|count|value)\s*(<|<=|>|>=|==|!=)\s*\d+(\.\d+)?$/;

function testConfig() {
  eq('duration 5m', durationSeconds('5m'), 300);
  eq('duration 1m30s', durationSeconds('1m30s'), 90);
  eq('duration 500ms', durationSeconds('500ms'), 0.5);
  eq('duration 1.5h', durationSeconds('1.5h'), 5400);
  for (const bad of ['', '5', '5x', '0s', '-1s', '5 m', 'm5', '1s2']) {
    throws(`duration "${bad}" rejected`, () => durationSeconds(bad), /is not a duration/);
  }
  const c = loadConfig({ DURATION: '30s', RATE_LIST_CERTIFICATES: '7', CERTCTL_URL: 'https://x:1/', RUN_ID: 'AbC' });
  eq('config duration seconds', c.durationSeconds, 30);
  eq('config rate override', c.rateFor('list_certificates', 50), 7);
  eq('config rate default', c.rateFor('issuance_acceptance', 50), 50);
  eq('config strips trailing slash', c.baseUrl, 'https://x:1');
  eq('config run id lower-cased (hostname-safe names)', c.runId, 'abc');
  eq('config default ids', c.ids.issuer, 'lt-issuer-local');
  throws('config bad rate', () => loadConfig({ RATE_X: '0' }).rateFor('x', 5), /RATE_X="0" must be a positive whole number/);
  eq('config rate unit: a minute, or the scenario\'s', [loadConfig({ TIME_UNIT_X: 'm' }).unitFor('x', '1s'), loadConfig({}).unitFor('x', '1s')], ['1m', '1s']);
  throws('config bad rate unit', () => loadConfig({ TIME_UNIT_X: 'h' }).unitFor('x', '1s'), /TIME_UNIT_X="h": use s/);
  throws('config bad MAX_VUS', () => loadConfig({ MAX_VUS: 'many' }), /MAX_VUS/);
  throws('config bad DURATION', () => loadConfig({ DURATION: 'soon' }), /DURATION="soon"/);
  throws('config bad ABORT_ON_FAIL', () => loadConfig({ ABORT_ON_FAIL: 'soon' }), /ABORT_ON_FAIL="soon" is not a duration/);
  eq('config ABORT_ON_FAIL', [loadConfig({}).abortAfter, loadConfig({ ABORT_ON_FAIL: '30s' }).abortAfter], ['', '30s']);
}

function testThresholds() {
  const judged = { 'checks{scenario:a}': ['rate==1'], 'http_reqs{scenario:a}': [] };
  eq('no ABORT_ON_FAIL: the expressions as they are', withAbort(judged, ''), judged);
  eq('ABORT_ON_FAIL: each expression ends the run once it fails, after the delay', withAbort(judged, '30s'),
    { 'checks{scenario:a}': [{ threshold: 'rate==1', abortOnFail: true, delayAbortEval: '30s' }], 'http_reqs{scenario:a}': [] });
  eq('scoped plain', scoped('checks', 'a'), 'checks{scenario:a}');
  eq('scoped with tags', scoped('checks{endpoint:nonce}', 'a'), 'checks{endpoint:nonce,scenario:a}');
  eq('a latency is scoped to successful requests', scoped('http_req_duration', 'a'), 'http_req_duration{expected_response:true,scenario:a}');
  eq('a latency with tags too', scoped('http_req_duration{endpoint:nonce}', 'a'), 'http_req_duration{endpoint:nonce,expected_response:true,scenario:a}');
  eq('an explicit expected_response stays', scoped('http_req_duration{expected_response:false}', 'a'), 'http_req_duration{expected_response:false,scenario:a}');
  eq('failures are not a latency', scoped('http_req_failed', 'a'), 'http_req_failed{scenario:a}');
  throws('scoped rejects scenario tag', () => scoped('x{scenario:b}', 'a'), /names a scenario itself/);
  throws('scoped rejects junk', () => scoped('x{', 'a'), /malformed/);
  throws('unknown budget', () => budgetFor('nope'), /no budget named "nope"/);

  const names = budgetNames();
  truthy('budgets exist', names.length >= 2);
  for (const name of names) {
    const b = budgetFor(name);
    if (b.dropped_iterations) eq(`${name}: dropped_iterations count==0`, b.dropped_iterations, ['count==0']);
    for (const [sel, exprs] of Object.entries(b)) {
      for (const e of exprs) truthy(`${name}: "${sel}: ${e}" is a k6 threshold expression`, EXPR.test(e));
    }
    const t = thresholdsFor(name, name, b.dropped_iterations ? 'constant-arrival-rate' : 'constant-vus');
    for (const key of Object.keys(t)) {
      truthy(`${name}: ${key} is scoped to its scenario`, key.indexOf(`scenario:${name}`) > 0);
    }
    eq(`${name}: http_reqs recorded without a verdict`, t[`http_reqs{scenario:${name}}`], []);
  }
  // Every budget can fail on a body check, and names only metrics that exist.
  for (const name of names) truthy(`${name}: budget has a checks threshold`, Object.keys(budgetFor(name)).some((k) => /^checks(\{|$)/.test(k)));
  const table = {
    ok: { checks: ['rate>0.99'], dropped_iterations: ['count==0'], http_req_duration: ['p(95)<10'] },
    nochecks: { http_req_duration: ['p(95)<10'], dropped_iterations: ['count==0'] },
    typo: { checks: ['rate>0.99'], http_req_duraton: ['p(95)<10'] },
    customtypo: { checks: ['rate>0.99'], bulk_renew_enqeued: ['count>0'] },
    child: { _extends: 'ok', http_req_duration: ['p(95)<20'] },
    loop1: { _extends: 'loop2' },
    loop2: { _extends: 'loop1' },
  };
  throws('a budget without checks is an error at init', () => thresholdsFor('nochecks', 's', 'constant-arrival-rate', null, table), /no checks threshold/);
  throws('a misspelt built-in metric is an error at init', () => thresholdsFor('typo', 's', 'constant-vus', null, table), /names metric "http_req_duraton", which neither k6 nor k6\/lib\/metrics.js defines/);
  throws('a misspelt custom metric is an error at init', () => thresholdsFor('customtypo', 's', 'constant-vus', null, table), /bulk_renew_enqeued/);
  eq('a declared custom metric is accepted', Object.keys(thresholdsFor('bulk_renewal', 'b', 'constant-arrival-rate')).length > 0, true);
  eq('_extends inherits and overrides', budgetFor('child', table), { checks: ['rate>0.99'], dropped_iterations: ['count==0'], http_req_duration: ['p(95)<20'] });
  throws('_extends loops are an error', () => budgetFor('loop1', table), /extends itself/);
  const nginx = thresholdsFor('nginx', 'nginx', 'constant-arrival-rate', { target_type: 'nginx' });
  eq('connector budget: request metrics scoped to the target type', nginx['connection_duration{target_type:nginx,scenario:nginx}'], ['p(95)<1000', 'p(99)<3000']);
  eq('connector budget: checks scoped to the target type', nginx['checks{target_type:nginx,scenario:nginx}'], ['rate>0.99']);
  eq('connector budget: dropped_iterations carries no request tag', nginx['dropped_iterations{scenario:nginx}'], ['count==0']);
  eq('f5 overrides the connector latency', thresholdsFor('f5', 'f5', 'constant-arrival-rate', { target_type: 'f5' })['connection_duration{target_type:f5,scenario:f5}'], ['p(95)<1500', 'p(99)<5000']);
  eq('iteration_duration recorded per scenario', nginx['iteration_duration{scenario:nginx}'], []);
  throws('an arrival-rate scenario needs a dropped_iterations budget', () => thresholdsFor('acme_burst', 'x', 'constant-arrival-rate'), /no dropped_iterations/);
  const t = thresholdsFor('issuance_acceptance', 'issuance_acceptance', 'constant-arrival-rate');
  eq('issuance p95/p99', t['http_req_duration{expected_response:true,scenario:issuance_acceptance}'], ['p(95)<2000', 'p(99)<5000']);
  eq('list p95/p99', thresholdsFor('list_certificates', 'list_certificates', 'constant-arrival-rate')['http_req_duration{expected_response:true,scenario:list_certificates}'], ['p(95)<800', 'p(99)<2000']);
  eq('every request\'s duration is recorded too', t['http_req_duration{scenario:issuance_acceptance}'], []);
}

function testMetrics() {
  eq('custom metric names, each declared once', customNames().length, new Set(customNames()).size);
  truthy('connection_duration declared', customNames().includes('connection_duration'));
  eq('a selector names its metric', knownMetric('http_req_duration{endpoint:nonce}', 't'), 'http_req_duration');
  throws('an unknown metric throws', () => knownMetric('bulk_renew_enqueud', 't'), /neither k6 nor/);
  throws('a spec metric given by a misspelt name throws', () => metricOf('conection_duration', 'scenario x'), /scenario x names metric "conection_duration"/);
}

function fakeData() {
  return {
    state: { testRunDurationMs: 31500 },
    setup_data: { certctl_version: 'v2.1.7', base_url: 'https://certctl-server:8443' },
    metrics: {
      'http_reqs{scenario:s}': { type: 'counter', values: { count: 1500, rate: 47.6 } },
      'iterations{scenario:s}': { type: 'counter', values: { count: 1490, rate: 47.3 } },
      'dropped_iterations{scenario:s}': { type: 'counter', values: { count: 10, rate: 0.3 }, thresholds: { 'count==0': { ok: false } } },
      'http_req_failed{scenario:s}': { type: 'rate', values: { rate: 0.002, passes: 3, fails: 1497 }, thresholds: { 'rate<0.01': { ok: true } } },
      'http_req_duration{expected_response:true,scenario:s}': {
        type: 'trend',
        values: { avg: 3.5, min: 1, med: 3.1, 'p(90)': 5, 'p(95)': 6.25, 'p(99)': 9.5, max: 40, count: 1497 },
        thresholds: { 'p(95)<800': { ok: true }, 'p(99)<2000': { ok: true } },
      },
      // The 3 failed requests took 0 ms: kept apart, they do not pull the figures down.
      'http_req_duration{scenario:s}': { type: 'trend', values: { avg: 3.49, min: 0, med: 3.1, 'p(90)': 5, 'p(95)': 6.25, 'p(99)': 9.5, max: 40, count: 1500 } },
      http_reqs: { type: 'counter', values: { count: 1503, rate: 47.7 } },
    },
  };
}

function testSummary() {
  const spec = { name: 's', tier: 'api' };
  const k6scenario = { executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s', preAllocatedVUs: 10, maxVUs: 300 };
  const rec = scenarioRecord(fakeData(), spec, k6scenario, { durationSeconds: 30 });
  eq('record schema', rec.schema, RECORD_SCHEMA);
  eq('record requests come from the scenario sub-metric, not setup', rec.requests, 1500);
  eq('record target rate', rec.target_rate_per_s, 50);
  eq('record rate unit and line', [rec.rate_unit, rateText(rec)], ['1s', '49.7/s of 50/s']);
  const perMinute = scenarioRecord(fakeData(), { name: 's', tier: 'connector' }, { executor: 'constant-arrival-rate', rate: 100, timeUnit: '1m', preAllocatedVUs: 5, maxVUs: 100 }, { durationSeconds: 30 });
  eq('a rate set per minute reads per minute', [perMinute.rate_unit, rateText(perMinute)], ['1m', '2980.0/min of 100/min']);
  const closed = scenarioRecord(fakeData(), spec, { executor: 'constant-vus', vus: 16, duration: '30s' }, { durationSeconds: 30 });
  eq('a closed model reads its VUs, not "of 0/s"', [closed.rate_unit, rateText(closed)], ['', '49.7/s with 16 VUs']);
  eq('record achieved rate = iterations / configured duration', [rec.achieved_rate_per_s, rec.cut_short], [49.667, undefined]);
  // Stopped at 40 s of 90 at a real 46/s: the rate over the 40 s it ran, and the record says it was cut.
  const stopped = fakeData();
  stopped.state.testRunDurationMs = 40000;
  stopped.metrics['iterations{scenario:s}'].values.count = 1840;
  const cut = scenarioRecord(stopped, spec, k6scenario, { durationSeconds: 90 });
  eq('a run cut short: its rate over the time it ran', [cut.achieved_rate_per_s, cut.cut_short, cut.duration_s], [46, true, 90]);
  eq('record dropped', rec.dropped_iterations, 10);
  eq('record error rate', rec.error_rate, 0.002);
  eq('record latency: the successful requests\'', rec.latency_ms, { avg: 3.5, min: 1, p50: 3.1, p90: 5, p95: 6.25, p99: 9.5, max: 40 });
  eq('record latency samples', [rec.latency_samples, rec.latency_metric], [1497, 'http_req_duration{expected_response:true}']);
  eq('record verdict', rec.thresholds_ok, false);
  eq('record setup data', rec.setup.certctl_version, 'v2.1.7');
  eq('threshold values: what each expression judged', thresholdResults(fakeData()).map((t) => t.value), [10, 6.25, 9.5, 0.002]);
  eq('threshold aggregates', thresholdResults(fakeData()).map((t) => t.aggregate), ['count', 'p(95)', 'p(99)', 'rate']);
  eq('a rate threshold carries its true and false samples, others none', thresholdResults(fakeData()).map((t) => [t.passes, t.fails]),
    [[undefined, undefined], [undefined, undefined], [undefined, undefined], [3, 1497]]);
  eq('threshold list', thresholdResults(fakeData()).map((t) => `${t.ok ? 'ok' : 'FAIL'} ${t.metric} ${t.expression}`), [
    'FAIL dropped_iterations{scenario:s} count==0',
    'ok http_req_duration{expected_response:true,scenario:s} p(95)<800',
    'ok http_req_duration{expected_response:true,scenario:s} p(99)<2000',
    'ok http_req_failed{scenario:s} rate<0.01',
  ]);
  // The merge of execution segments (internal/segments) reads which samples made which figure from here.
  eq('record sources: the sub-metrics behind its figures', rec.sources, {
    latency: 'http_req_duration{expected_response:true,scenario:s}', iteration: 'iteration_duration{scenario:s}',
    error_rate: 'http_req_failed{scenario:s}', trends: {},
  });
  eq('a whole load names no segment', [rec.segment, rec.segment_id], [undefined, undefined]);
  const seg = scenarioRecord(fakeData(), spec, Object.assign({ segment: { segment: '1/2:1', sequence: '0,1/2,1', id: '2of2' } }, k6scenario), { durationSeconds: 30 });
  eq('a segment\'s record names its part of the load', [seg.segment, seg.segment_sequence, seg.segment_id], ['1/2:1', '0,1/2,1', '2of2']);
  truthy('line names the failed threshold', /FAILED: dropped_iterations\{scenario:s\} count==0/.test(renderLine(rec)));
  const empty = scenarioRecord({ metrics: {}, state: {} }, spec, k6scenario, { durationSeconds: 30 });
  eq('a scenario with no samples reports zeros, not NaN', [empty.requests, empty.latency_ms.p99, empty.error_rate], [0, 0, 0]);
  const down = fakeData();
  delete down.metrics['http_req_duration{expected_response:true,scenario:s}'];
  truthy('every request failed: no latency to print', /no successful request to time/.test(renderLine(scenarioRecord(down, spec, k6scenario, { durationSeconds: 30 }))));
  // k6 holds a threshold over no sample (a p(95) of 0 ms when nothing succeeded); the record does not.
  const none = fakeData();
  none.metrics['acme_order_ms{scenario:s}'] = { type: 'trend', values: { avg: 0, min: 0, med: 0, 'p(95)': 0, max: 0, count: 0 }, thresholds: { 'p(95)<2000': { ok: true } } };
  none.metrics['acme_order_ok{scenario:s}'] = { type: 'rate', values: { rate: 0, passes: 0, fails: 0 }, thresholds: { 'rate>0.99': { ok: true } } };
  none.metrics['acme_finalize_500{scenario:s}'] = { type: 'counter', values: { count: 0, rate: 0 }, thresholds: { 'count==0': { ok: true } } };
  const judged = Object.fromEntries(thresholdResults(none).map((t) => [t.metric, t]));
  eq('a trend with no sample: no_sample, not held', [judged['acme_order_ms{scenario:s}'].ok, judged['acme_order_ms{scenario:s}'].no_sample, judged['acme_order_ms{scenario:s}'].value], [false, true, undefined]);
  eq('a rate with no sample: no_sample, not held', [judged['acme_order_ok{scenario:s}'].ok, judged['acme_order_ok{scenario:s}'].no_sample], [false, true]);
  eq('a counter with no sample counted nothing: judged', [judged['acme_finalize_500{scenario:s}'].ok, judged['acme_finalize_500{scenario:s}'].no_sample], [true, undefined]);
  eq('a record with a threshold over no sample does not pass', scenarioRecord(none, spec, k6scenario, { durationSeconds: 30 }).thresholds_ok, false);
}

function testARI() {
  const a = ariCertID(ARI_LEAF);
  eq('ARI id of a certctl leaf (AKI . serial, base64url)', a.id, '4TzICtWFX0RNPRodqjRzlREc3m0.TAmwrpHgbFBUc5hcWm-b6MFSyHY');
  eq('ARI serial hex', a.serialHex, '4c09b0ae91e06c505473985c5a6f9be8c152c876');
  throws('ARI id of garbage', () => ariCertID('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'));
  truthy('synthetic ARI ids are well-formed base64url pairs', /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(syntheticARIID(123456)));
  truthy('synthetic ARI ids differ', syntheticARIID(1) !== syntheticARIID(2));
  // The serials certctl's revoke-cert cannot find (docs/certctl-findings.md#ari-leading-zero).
  eq('a serial 0a… starts with a zero digit', serialStartsWithZero(SERIAL_0A), true);
  eq('a serial 8a… (DER sign byte 00) does not', serialStartsWithZero(SERIAL_8A), false);
  eq('a serial 008a… (a zero first byte, DER sign byte 00) starts with a zero digit', serialStartsWithZero(SERIAL_008A), true);
  eq('a certctl leaf 4c… does not', serialStartsWithZero(ARI_LEAF), false);
}

function testDisk() {
  const MB = 1 << 20;
  eq('results of 50/s for 300 s', resultsBytes({ executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s' }, 300), 15000 * 1024 + MB);
  eq('results of 100/min for 60 s', resultsBytes({ executor: 'constant-arrival-rate', rate: 100, timeUnit: '1m' }, 60), 100 * 1024 + MB);
  eq('results of 200 VUs for 60 s', resultsBytes({ executor: 'constant-vus', vus: 200 }, 60), 120000 * 1024 + MB);
  eq('no free space measured: no check', diskShortfall('a', 100 * MB, { resultsFreeBytes: 0, runScenarios: 2 }), null);
  eq('enough for all', diskShortfall('a', 10 * MB, { resultsFreeBytes: 20 * MB, runScenarios: 2, duration: '5m' }), null);
  const short = diskShortfall('a', 11 * MB, { resultsFreeBytes: 20 * MB, runScenarios: 2, duration: '5m' });
  truthy('short for all: says so', /not enough disk space for the results: a writes about 11 MB in 5m, 2 scenario\(s\) about 22 MB, and RESULTS_DIR has 20 MB free/.test(short));
}

function testUntimed() {
  const h = untimedHeaders('cleanup', { Authorization: 'Bearer x' });
  eq('untimed headers keep the others', h.Authorization, 'Bearer x');
  eq('untimed headers name the phase', h[UNTIMED_HEADER], 'cleanup');
  eq('untimed headers alone', Object.keys(untimedHeaders('setup')).join(','), UNTIMED_HEADER);
}

function testDeploy() {
  truthy('certctl timestamp with nanoseconds, its fraction kept', Math.abs(parseTime('2026-11-25T00:11:22.123456789Z') - Date.UTC(2026, 10, 25, 0, 11, 22, 123) - 0.456789) < 1e-3);
  eq('timestamp without a fraction', parseTime('2026-11-25T00:11:22Z'), Date.UTC(2026, 10, 25, 0, 11, 22));
  eq('timestamp with an offset', parseTime('2026-11-25T01:11:22.5+01:00'), Date.UTC(2026, 10, 25, 0, 11, 22, 500));
  truthy('no timestamp is NaN', isNaN(parseTime('')) && isNaN(parseTime(undefined)));
  truthy('not a timestamp is NaN', isNaN(parseTime('yesterday')));
  eq('record key of a tagged selector', recordKey('deploy_loop_ms{target_type:nginx}', 'deploy_latency'), 'deploy_loop_ms{target_type:nginx,scenario:deploy_latency}');
  eq('record key of a bare name', recordKey('http_req_tls_handshaking', 'nginx'), 'http_req_tls_handshaking{scenario:nginx}');
  const tr = deployTrends();
  eq('four stages per target type', Object.keys(tr).length, 4 * TYPES.length);
  eq('the F5 loop is the f5 type\'s', tr.loop_f5, 'deploy_loop_ms{target_type:f5}');
  for (const sel of Object.values(tr)) metricOf(sel.replace(/\{.*/, ''), 'test');
  eq('stuck after, default', deployConfig({}).stuckAfterS, 75);
  throws('stuck after, malformed', () => deployConfig({ DEPLOY_STUCK_AFTER: 'later' }), /DEPLOY_STUCK_AFTER="later"/);
  eq('mass certificates, default', deployConfig({}).massCerts, 1000);
  throws('mass certificates, not a count', () => deployConfig({ DEPLOY_MASS_CERTS: '1e3' }), /DEPLOY_MASS_CERTS=1e3/);
  eq('mass deadline, default 5 m', deployConfig({}).massDeadlineS, 300);
  eq('mass deadline, cut to a shorter DURATION', deployConfig({ DURATION: '90s' }).massDeadlineS, 90);
  eq('an F5 login refused is the token leak', failedCounter({ last_error: 'deployment failed: F5 auth failed with status 400: user x has reached maximum active login tokens' }).name, 'deploy_f5_token_limit');
  eq('any other failure is a failure', failedCounter({ last_error: 'reload failed' }).name, 'deploy_failed');
  eq('a failure without an error is a failure', failedCounter({}).name, 'deploy_failed');
  eq('outcomes per target type', DEPLOY_COUNTERS.stolen_f5, 'deploy_stolen{target_type:f5}');
  // A deployment job created at 18:48:20.400 for agent a1; the audit rows certctl writes as requests end.
  const created = parseTime('2026-12-06T18:48:20.400123Z');
  const row = (path, at) => ({ resource_id: path, timestamp: at });
  const csrPoll = row('/api/v1/agents/a1/work', '2026-12-06T18:48:20.390551Z');
  const csr = row('/api/v1/agents/a1/csr', '2026-12-06T18:48:20.452001Z');
  eq('the poll that handed over the CSR job claimed nothing', agentPolledAfter([csrPoll, csr], 'a1', created), false);
  eq('a poll that ended after the job existed could claim it', agentPolledAfter([csrPoll, row('/api/v1/agents/a1/work', '2026-12-06T18:48:50.401Z')], 'a1', created), true);
  eq('another agent\'s poll claims nothing of a1\'s', agentPolledAfter([row('/api/v1/agents/a2/work', '2026-12-06T18:48:30Z')], 'a1', created), false);
  eq('no rows, no poll', agentPolledAfter([], 'a1', created), false);
}

// RFC 7638 section 3.1's example key and its thumbprint.
const RFC7638_JWK = {
  kty: 'RSA', e: 'AQAB', alg: 'RS256', kid: '2011-04-29',
  n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
};

const coordLen = (b64) => new Uint8Array(encoding.b64decode(b64, 'rawurl')).length;

async function testPKI() {
  eq('thumbprint input: required members, sorted, no whitespace', thumbprintInput(RFC7638_JWK).slice(0, 23), '{"e":"AQAB","kty":"RSA"');
  eq('RFC 7638 example thumbprint', await thumbprint(RFC7638_JWK), 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  eq('EC thumbprint members', thumbprintInput({ kty: 'EC', crv: 'P-256', x: 'X', y: 'Y', alg: 'ES256' }), '{"crv":"P-256","kty":"EC","x":"X","y":"Y"}');
  throws('thumbprint: a member missing', () => thumbprintInput({ kty: 'EC', crv: 'P-256', x: 'X' }), /member y missing/);

  // A point whose x begins with a zero byte keeps it: x decodes to 32 bytes, not 31.
  const point = new Uint8Array(65);
  point[0] = 0x04; point[2] = 0xab; point[33] = 0x7f;
  const padded = p256JWK(point.buffer);
  eq('JWK x and y keep leading zero bytes', [coordLen(padded.x), coordLen(padded.y), padded.x.slice(0, 4)], [32, 32, 'AKsA']);
  throws('JWK from a compressed point', () => p256JWK(new Uint8Array(33)), /want 65 bytes/);
  // k6's own JWK export shortens one coordinate in about 128 keys; 600 keys find that with 99 % odds.
  let short = 0;
  for (let i = 0; i < 600; i++) {
    const k = await newAccountKey();
    if (coordLen(k.jwk.x) !== 32 || coordLen(k.jwk.y) !== 32) short++;
  }
  eq('600 account keys, every coordinate 32 bytes', short, 0);

  // ACME_CHALLENGE_WRONG: that share of the orders, evenly spread; none at 0, every one at 1.
  const wrongAt = (share) => Array.from({ length: 20 }, (_, i) => i).filter((i) => inShare(i, share));
  eq('wrong answers at 0.2: every fifth order', wrongAt(0.2), [4, 9, 14, 19]);
  eq('wrong answers at 0 and 1', [wrongAt(0).length, wrongAt(1).length], [0, 20]);
  // ACME_SLOW_VUS: the saturation's slow clients, refused when not a whole number ≥ 1.
  eq('slow clients: the default, and as given', [slowVUs({}), slowVUs({ ACME_SLOW_VUS: '45' })], [15, 45]);
  throws('slow clients: 0', () => slowVUs({ ACME_SLOW_VUS: '0' }), /ACME_SLOW_VUS="0"/);
  throws('slow clients: 2.5', () => slowVUs({ ACME_SLOW_VUS: '2.5' }), /a whole number/);
  eq('the saturation records each part apart', [ACME_SATURATION_TRENDS.validation_fast, ACME_SATURATION_COUNTERS.issued_slow],
    ['acme_validation_ms{part:fast}', 'pki_issued{part:slow}']);

  const key = await newAccountKey();
  const first = JSON.parse(await jws(key, { nonce: 'n1', url: 'https://ca/new-account' }, { termsOfServiceAgreed: true }));
  const h1 = JSON.parse(encoding.b64decode(first.protected, 'rawurl', 's'));
  eq('new-account JWS carries the JWK, not a kid', [h1.alg, !!h1.jwk, h1.kid, h1.nonce, h1.url], ['ES256', true, undefined, 'n1', 'https://ca/new-account']);
  const sig = new Uint8Array(encoding.b64decode(first.signature, 'rawurl'));
  eq('ES256 signature is r||s, 64 bytes', sig.length, 64);
  const input = new TextEncoder().encode(`${first.protected}.${first.payload}`);
  truthy('the JWS verifies under the account key', await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key.pair.publicKey, sig, input));
  const later = JSON.parse(await jws(key, { kid: 'https://ca/acct/1', nonce: 'n2', url: 'https://ca/order/1' }, ''));
  const h2 = JSON.parse(encoding.b64decode(later.protected, 'rawurl', 's'));
  eq('POST-as-GET: empty payload, kid and no JWK', [later.payload, h2.kid, h2.jwk], ['', 'https://ca/acct/1', undefined]);

  eq('DER short length', Array.from(tlv(0x04, new Uint8Array(3))), [4, 3, 0, 0, 0]);
  eq('DER long length', Array.from(tlv(0x04, new Uint8Array(200)).subarray(0, 3)), [4, 0x81, 200]);
  const rs = new Uint8Array(64);
  rs[0] = 0x80; rs[31] = 1; rs[63] = 2;
  const der = ecdsaSigDER(rs);
  eq('ECDSA-Sig-Value: a high r gets a zero byte', Array.from(der.subarray(0, 5)), [0x30, 38, 0x02, 33, 0x00]);
  eq('ECDSA-Sig-Value: a small s loses its leading zeros', Array.from(der.subarray(der.length - 3)), [0x02, 1, 2]);

  const csr = await csrDER(key.pair, 'a.example.com', ['a.example.com', 'b.example.com']);
  const parts = children(csr, readTLV(csr, 0));
  eq('CSR: info, algorithm, signature', parts.map((p) => p.tag), [0x30, 0x30, 0x03]);
  const info = csr.slice(parts[0].at, parts[0].end);
  const csig = children(csr, readTLV(csr, parts[2].start + 1));
  const raw = new Uint8Array(64);
  const put = (t, at) => { let v = csr.subarray(t.start, t.end); while (v.length > 32) v = v.subarray(1); raw.set(v, at + 32 - v.length); };
  put(csig[0], 0);
  put(csig[1], 32);
  truthy('CSR signature verifies over its info', await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key.pair.publicKey, raw, info));

  // An external target's ARI requests: PEM that openssl would read (64-column base64 lines), a CSR inside.
  const pem = await newCSRPem('ari-1.loadtest.example.com');
  const lines = pem.trim().split('\n');
  eq('CSR PEM: armour', [lines[0], lines[lines.length - 1]], ['-----BEGIN CERTIFICATE REQUEST-----', '-----END CERTIFICATE REQUEST-----']);
  truthy('CSR PEM: 64-column lines', lines.slice(1, -2).every((l) => l.length === 64) && lines[lines.length - 2].length <= 64);
  const pder = new Uint8Array(encoding.b64decode(lines.slice(1, -1).join(''), 'std'));
  eq('CSR PEM: a CSR inside', children(pder, readTLV(pder, 0)).map((p) => p.tag), [0x30, 0x30, 0x03]);
  truthy('CSR PEM: for its name', new TextDecoder().decode(pder).includes('ari-1.loadtest.example.com'));

  const [ecLeaf] = pemBlocks(PKI['ec-leaf']);
  const [ecCA] = pemBlocks(PKI['ec-ca']);
  const [rsaLeaf] = pemBlocks(PKI['rsa-leaf']);
  const [rsaCA] = pemBlocks(PKI['rsa-ca']);
  eq('certificate names', certNames(ecLeaf), { cn: 'leaf.example.com', dns: ['leaf.example.com', 'www.leaf.example.com'] });
  truthy('a leaf verifies under its P-256 CA', await signedBy(ecLeaf, ecCA));
  truthy('a leaf verifies under its RSA CA', await signedBy(rsaLeaf, rsaCA));
  truthy('a P-256 leaf does not verify under another CA', !(await signedBy(ecLeaf, rsaCA).catch(() => false)));
  const forged = ecLeaf.slice();
  forged[40] ^= 1;
  truthy('a changed certificate does not verify', !(await signedBy(forged, ecCA).catch(() => false)));
}

async function testOCSP() {
  const [ca] = pemBlocks(PKI['rsa-ca']);
  const [ecCA] = pemBlocks(PKI['ec-ca']);
  eq('OCSP request: byte for byte what openssl ocsp writes', Array.from(await ocspRequest(ca, GOOD_SERIAL)), Array.from(PKI_DER['ocsp-request-openssl']));
  const want = { 'ocsp-good': ['good', GOOD_SERIAL], 'ocsp-revoked': ['revoked', REVOKED_SERIAL], 'ocsp-unknown': ['unknown', '1234'] };
  for (const [name, [status, serial]] of Object.entries(want)) {
    const p = parseOCSP(PKI_DER[name]);
    eq(`${name}: successful, one response`, [p.status, p.responses.length], ['successful', 1]);
    eq(`${name}: status and serial`, [p.responses[0].status, p.responses[0].serial], [status, serial]);
    const r = p.responses[0];
    truthy(`${name}: times sane at thisUpdate`, saneTimes(r, r.thisUpdate.getTime()));
    truthy(`${name}: stale after nextUpdate`, !saneTimes(r, r.nextUpdate.getTime() + 3600 * 1000));
    eq(`${name}: signed by a responder the CA delegated`, await ocspVerified(p, ca), 'delegated');
    eq(`${name}: not by another CA`, await ocspVerified(p, ecCA), '');
  }
  eq('an OCSP error status', parseOCSP(new Uint8Array([0x30, 0x03, 0x0a, 0x01, 0x02])).status, 'internalError');
  const crl = parseCRL(PKI_DER.crl);
  eq('CRL: the revoked serial', crl.revoked, [REVOKED_SERIAL]);
  truthy('CRL: nextUpdate after thisUpdate', crl.nextUpdate > crl.thisUpdate);
  truthy('CRL: signed by its CA', await crlVerified(crl, ca));
  truthy('CRL: not by another', !(await crlVerified(crl, ecCA)));
}

export default async function () {
  const tests = { testPKI, testOCSP, testDeploy, testARI, testUntimed, testDisk, testConfig, testThresholds, testMetrics, testSummary };
  for (const [name, fn] of Object.entries(tests)) {
    // LIB_TEST_SKIP leaves a function out, as a loop that lost its cases would, with no check failed:
    // test/k6lib shows the assertions count alone failing such a run.
    if (name !== __ENV.LIB_TEST_SKIP) await guarded(name, fn);
  }
}

export function handleSummary(data) {
  const c = data.metrics.checks.values;
  const n = data.metrics.assertions ? data.metrics.assertions.values.count : 0;
  const counted = n === ASSERTIONS ? '' : `; ${n} assertions made, ${ASSERTIONS} expected (ASSERTIONS in k6/test/lib.test.js)`;
  return { stdout: `k6/lib tests: ${c.passes} passed, ${c.fails} failed${counted}\n` };
}
