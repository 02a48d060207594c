// Connector tier journey: one fresh TCP connection, a full TLS handshake and a small HTTP exchange
// against a deployment target. Verification is on (the run's CA, SAN = host name), so a handshake
// with the wrong certificate fails; the checks also require a real handshake, the expected TLS version
// and the target's own page.
import http from 'k6/http';
import { check } from 'k6';
import { connectionDuration } from './metrics.js';
import { knob } from './config.js';

// The four target types and the page each serves. Where the stack serves them is CONNECTOR_<TYPE>_URL,
// by default https://<type>/ (the registry, internal/harness/knobs.go).
export const TARGETS = {
  nginx: { marker: 'certctl-loadtest nginx' },
  apache: { marker: 'certctl-loadtest apache' },
  haproxy: { marker: 'certctl-loadtest haproxy' },
  f5: { marker: 'certctl-loadtest f5' },
};

export function target(type, env) {
  const t = TARGETS[type];
  if (!t) throw new Error(`unknown target type "${type}" (known: ${Object.keys(TARGETS).join(', ')})`);
  const e = env || __ENV;
  return Object.freeze({
    type,
    url: knob(e, `CONNECTOR_${type.toUpperCase()}_URL`, 'CONNECTOR_<TYPE>_URL').replace('<type>', type),
    marker: t.marker,
    // What the fixtures negotiate with k6 (both sides allow 1.2 and 1.3).
    tlsVersion: knob(e, 'EXPECT_TLS_VERSION'),
  });
}

export function handshake(cfg, t) {
  const res = http.get(t.url, {
    tags: { target_type: t.type, name: `GET ${t.type} /` },
    timeout: cfg.requestTimeout,
    responseCallback: http.expectedStatuses(200),
  });
  if (res.status !== 0) {
    const t0 = res.timings;
    connectionDuration.add(t0.blocked + t0.connecting + t0.tls_handshaking + t0.duration, { target_type: t.type });
  }
  check(res, {
    'handshake: a new TLS handshake took place': (r) => r.timings.tls_handshaking > 0,
    [`handshake: negotiated ${t.tlsVersion}`]: (r) => r.tls_version === t.tlsVersion,
    'handshake: status 200 with the target page': (r) => r.status === 200 && String(r.body).indexOf(t.marker) >= 0,
  }, { target_type: t.type });
  return res;
}

// setup() of a connector scenario: no abort. A target that is down or serves the wrong certificate
// must show up as failed requests and checks in its own figures; the other targets run regardless.
export function describeTarget(t) {
  return () => ({ target_type: t.type, url: t.url, expected_tls_version: t.tlsVersion });
}

// The connector tier starts 10 s after the API tier, as certctl's own harness runs them, so that the
// API scenarios' warm-up does not overlap the handshakes' first seconds.
export const CONNECTOR_START = '10s';

// connectorSpec(type, load): the scenario spec every connector file shares.
export function connectorSpec(type, load) {
  const t = target(type);
  return {
    spec: {
      name: type,
      tier: 'connector',
      // thresholds.json: every target's budget extends "connector"; each is scoped to its target_type.
      budget: type,
      budgetTags: { target_type: type },
      load: Object.assign({ startTime: CONNECTOR_START }, load),
      options: { noConnectionReuse: true },
      probe: describeTarget(t),
      latencyMetric: connectionDuration,
      trends: { tls_handshake: 'http_req_tls_handshaking', connect: 'http_req_connecting', request: 'http_req_duration' },
      labels: { target_type: type },
    },
    target: t,
  };
}
