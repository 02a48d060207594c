// ACME tier journeys: certctl's per-profile ACME server. Every /acme request carries the Bearer API key
// as well: certctl answers 401 without it (docs/certctl-findings.md#acme-needs-bearer). Checks look at
// content type and body, not only the status: with its dashboard in the working directory certctl
// answers /acme/* with a 200 HTML page (docs/certctl-findings.md#dashboard-mode).
import http from 'k6/http';
import { check } from 'k6';
import { Counter, Rate } from 'k6/metrics';
import encoding from 'k6/encoding';
import exec from 'k6/execution';
import { probeCertctl } from './probe.js';
import { ariCertID } from './der.js';

const B64URL = /^[A-Za-z0-9_-]+$/;

// Every /acme response: 1 if it is a 5xx. k6 sets no server_error tag, so a threshold needs this.
export const serverErrors = new Rate('acme_server_errors');
// 429s: the shape RFC 8555 asks for, and any other (certctl's limiter answers text/plain:
// docs/certctl-findings.md#rate-limiter).
export const rateLimitShapeOK = new Counter('acme_rate_limit_shape_ok');
export const rateLimitOther = new Counter('acme_rate_limit_other');
// Renewal-info 404s for real certificates whose serial starts with a zero hex digit: certctl's known bug,
// v2.1.7 and main alike (docs/certctl-findings.md#ari-leading-zero), counted apart so the figure is
// visible and the cause is named.
export const ariLeadingZero404 = new Counter('acme_ari_leading_zero_404');

export function acmeBase(cfg) {
  return `${cfg.baseUrl}/acme/profile/${cfg.ids.profile}`;
}

function params(cfg, endpoint, expected, extraTags) {
  return {
    headers: { Authorization: `Bearer ${cfg.token}` },
    tags: Object.assign({ endpoint, name: `ACME ${endpoint}` }, extraTags || {}),
    timeout: cfg.requestTimeout,
    responseCallback: http.expectedStatuses(...expected),
  };
}

function contentType(r) {
  return String(r.headers['Content-Type'] || '').split(';')[0].trim().toLowerCase();
}

function body(r) {
  try {
    return r.json();
  } catch (_) {
    return null;
  }
}

function account(r) {
  serverErrors.add(r.status >= 500);
  if (r.status === 429) {
    const p = body(r);
    const ok = contentType(r) === 'application/problem+json' && !!p && p.type === 'urn:ietf:params:acme:error:rateLimited';
    (ok ? rateLimitShapeOK : rateLimitOther).add(1);
  }
  return r;
}

const DIRECTORY_KEYS = ['newNonce', 'newAccount', 'newOrder', 'revokeCert', 'keyChange', 'renewalInfo'];

export function directory(cfg) {
  const r = account(http.get(`${acmeBase(cfg)}/directory`, params(cfg, 'directory', [200])));
  check(r, {
    'directory: 200 application/json': (x) => x.status === 200 && contentType(x) === 'application/json',
    'directory: every RFC 8555 resource is a URL': (x) => {
      const d = body(x);
      return !!d && DIRECTORY_KEYS.every((k) => typeof d[k] === 'string' && /^https:\/\//.test(d[k]));
    },
  });
  return r;
}

export function newNonce(cfg) {
  const r = account(http.head(`${acmeBase(cfg)}/new-nonce`, params(cfg, 'nonce', [200])));
  check(r, {
    'nonce: 200 with a base64url Replay-Nonce': (x) => x.status === 200 && B64URL.test(x.headers['Replay-Nonce'] || ''),
    'nonce: Cache-Control no-store': (x) => /no-store/.test(x.headers['Cache-Control'] || ''),
  });
  return r;
}

// renewalInfo for a certificate issued in setup() (known) or a synthetic id (404 expected).
export function renewalInfo(cfg, cert) {
  if (!cert.known) {
    const r = account(http.get(`${acmeBase(cfg)}/renewal-info/${cert.id}`, params(cfg, 'renewal_info', [404], { ari: 'unknown' })));
    check(r, {
      'renewal-info unknown: 404 application/problem+json': (x) => x.status === 404 && contentType(x) === 'application/problem+json' && !!body(x) && typeof body(x).type === 'string',
    });
    return r;
  }
  const expected = cert.leadingZero ? [200, 404] : [200];
  const r = account(http.get(`${acmeBase(cfg)}/renewal-info/${cert.id}`, params(cfg, 'renewal_info', expected, { ari: 'known' })));
  if (cert.leadingZero && r.status === 404) {
    ariLeadingZero404.add(1);
    return r;
  }
  check(r, {
    'renewal-info: 200 application/json with a suggestedWindow': (x) => {
      const w = x.status === 200 && contentType(x) === 'application/json' && body(x) && body(x).suggestedWindow;
      return !!w && Date.parse(w.start) < Date.parse(w.end);
    },
  });
  return r;
}

// A well-formed ARI id that names no certificate: certctl must answer 404, not 400.
export function syntheticARIID(n) {
  const serial = new Uint8Array([0x7f, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
  return `bG9hZHRlc3Qtbm8tc3VjaC1ha2k.${encoding.b64encode(serial.buffer, 'rawurl')}`;
}

// CSRs tls-init wrote for the ARI certificates (/tls/ari/<i>.csr, CN ari-<i>.loadtest.example.com).
// Read at init, where k6 allows file access; absent (e.g. under `k6 inspect`) gives none.
export function loadCSRs(dir, count) {
  const out = [];
  for (let i = 1; i <= count; i++) {
    try {
      out.push({ cn: `ari-${i}.loadtest.example.com`, pem: open(`${dir}/${i}.csr`) });
    } catch (_) {
      break;
    }
  }
  return out;
}

// issueForARI issues one certificate per CSR through the agent CSR path (POST /api/v1/agents/{id}/csr,
// docs/certctl-findings.md#agent-csr-path) and returns what renewal-info needs. Throws a sentence on the
// first failure.
export function issueForARI(cfg, csrs) {
  const h = { Authorization: `Bearer ${cfg.token}`, 'Content-Type': 'application/json' };
  const p = { headers: h, timeout: '30s', tags: { phase: 'setup' } };
  const agent = http.post(`${cfg.baseUrl}/api/v1/agents`, JSON.stringify({
    name: `lt-ari-${cfg.runId}`, hostname: `ari.${cfg.runId}.loadtest.example.com`, os: 'linux',
    architecture: 'amd64', ip_address: '127.0.0.1', version: 'certctl-loadtest',
  }), p);
  if (agent.status !== 201) throw new Error(`registering the ARI agent answered HTTP ${agent.status}: ${String(agent.body).slice(0, 200)}`);
  const agentID = agent.json().id;
  const certs = [];
  csrs.forEach((c, i) => {
    const id = `lt-ari-${cfg.runId}-${i}`;
    const created = http.post(`${cfg.baseUrl}/api/v1/certificates`, JSON.stringify({
      id, name: id, common_name: c.cn, sans: [c.cn], issuer_id: cfg.ids.issuer, owner_id: cfg.ids.owner,
      team_id: cfg.ids.team, renewal_policy_id: cfg.ids.policy, certificate_profile_id: cfg.ids.profile, environment: 'loadtest',
    }), p);
    if (created.status !== 201) throw new Error(`creating ${id} answered HTTP ${created.status}: ${String(created.body).slice(0, 200)}`);
    const signed = http.post(`${cfg.baseUrl}/api/v1/agents/${agentID}/csr`, JSON.stringify({ csr_pem: c.pem, certificate_id: id }), p);
    if (signed.status !== 202) throw new Error(`the CSR for ${id} answered HTTP ${signed.status}: ${String(signed.body).slice(0, 200)}`);
    // certctl answers 202 even when the issuer is not loaded and nothing was signed (docs/certctl-findings.md#agent-csr-path).
    const versions = http.get(`${cfg.baseUrl}/api/v1/certificates/${id}/versions`, p);
    const v = versions.status === 200 && versions.json().data && versions.json().data[0];
    if (!v || !v.pem_chain) throw new Error(`certctl accepted the CSR for ${id} but issued nothing (no certificate version): is issuer ${cfg.ids.issuer} enabled and loaded?`);
    const ari = ariCertID(v.pem_chain);
    certs.push({ known: true, id: ari.id, certificate_id: id, serial: v.serial_number, leadingZero: /^0/.test(v.serial_number) });
  });
  return certs;
}

// acmeProbe: setup() of the ACME scenarios. Probes certctl, then issues the certificates renewal-info
// will ask about; either failing aborts the run in one sentence before any load.
export function acmeProbe(csrs) {
  return (cfg) => {
    const info = probeCertctl(cfg);
    if (!csrs.length) return exec.test.abort('no CSRs under /tls/ari: tls-init writes them; is this the harness stack?');
    try {
      return Object.assign(info, { ari_certificates: issueForARI(cfg, csrs) });
    } catch (e) {
      return exec.test.abort(`issuing the certificates renewal-info asks about failed: ${e.message}`);
    }
  };
}

// acmeIteration: one directory, one nonce, one renewal-info; renewal-info alternates between a
// certificate issued in setup() and a synthetic id.
export function acmeIteration(cfg, known, n) {
  directory(cfg);
  newNonce(cfg);
  renewalInfo(cfg, n % 2 === 0 ? known[(n / 2) % known.length] : { known: false, id: syntheticARIID(n) });
}
