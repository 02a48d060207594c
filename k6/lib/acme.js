// ACME tier journeys: certctl's per-profile ACME server. Every /acme request carries the Bearer API key
// as well: certctl answers 401 without it (docs/certctl-findings.md#acme-needs-bearer). Checks look at
// content type and body, not only the status: with its dashboard in the working directory certctl
// answers /acme/* with a 200 HTML page (docs/certctl-findings.md#dashboard-mode).
import http from 'k6/http';
import { check } from 'k6';
import { acmeServerErrors, acmeRateLimitShapeOK, acmeRateLimitOther, acmeRateLimitTextPlain, acmeARILeadingZero404, acmeARIOtherIssuer404 } from './metrics.js';
import encoding from 'k6/encoding';
import exec from 'k6/execution';
import { probeCertctl } from './probe.js';
import { ariCertID, newCSRPem } from './der.js';
import { json, setupParams, registerAgent, issueWithCSR, untimedHeaders } from './certctl.js';

const B64URL = /^[A-Za-z0-9_-]+$/;

// What an ACME scenario records besides k6's own metrics (declared in metrics.js).
export const ACME_COUNTERS = Object.freeze({
  ari_leading_zero_404: acmeARILeadingZero404,
  ari_other_issuer_404: acmeARIOtherIssuer404,
  server_errors: acmeServerErrors,
  rate_limit_shape_ok: acmeRateLimitShapeOK,
  rate_limit_other: acmeRateLimitOther,
  rate_limit_text_plain: acmeRateLimitTextPlain,
});

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
  acmeServerErrors.add(r.status >= 500);
  if (r.status === 429) {
    const p = body(r);
    const ok = contentType(r) === 'application/problem+json' && !!p && p.type === 'urn:ietf:params:acme:error:rateLimited';
    (ok ? acmeRateLimitShapeOK : acmeRateLimitOther).add(1);
    if (!ok && contentType(r) === 'text/plain' && /^\{"error":"Rate limit exceeded"\}\s*$/.test(String(r.body))) acmeRateLimitTextPlain.add(1);
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
  const expected = cert.leadingZero || cert.manyIssuers ? [200, 404] : [200];
  const r = account(http.get(`${acmeBase(cfg)}/renewal-info/${cert.id}`, params(cfg, 'renewal_info', expected, { ari: 'known' })));
  if (cert.leadingZero && r.status === 404) {
    acmeARILeadingZero404.add(1);
    return r;
  }
  if (cert.manyIssuers && r.status === 404) {
    acmeARIOtherIssuer404.add(1);
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

// newNonceLimited: new-nonce under certctl's rate limiter, where a 429 is an expected answer and must
// have RFC 8555's shape (section 6.7: problem+json of type rateLimited). GET, not HEAD (section 7.2
// allows both): a HEAD answer has no body in which to show the shape.
export function newNonceLimited(cfg) {
  const r = account(http.get(`${acmeBase(cfg)}/new-nonce`, params(cfg, 'nonce', [200, 204, 429])));
  check(r, {
    'limited nonce: a Replay-Nonce, or a 429 problem+json of type rateLimited': (x) => (x.status === 429
      ? contentType(x) === 'application/problem+json' && !!body(x) && body(x).type === 'urn:ietf:params:acme:error:rateLimited'
      : (x.status === 200 || x.status === 204) && B64URL.test(x.headers['Replay-Nonce'] || '')),
  });
  return r;
}

// limiterProbe: setup() of the rate-limit scenario. certctl's limiter is a server setting; without it
// the scenario would measure nothing, so a burst proves it is on first.
export function limiterProbe(cfg) {
  const info = probeCertctl(cfg);
  // The directory, not new-nonce: the limiter counts every request of a client, and faults a test puts
  // on new-nonce must not slow this burst below the limit.
  const url = `${acmeBase(cfg)}/directory`;
  const p = { headers: untimedHeaders('setup', { Authorization: `Bearer ${cfg.token}` }), timeout: '10s', tags: { phase: 'setup' }, responseCallback: http.expectedStatuses(200, 429) };
  const answers = http.batch(Array.from({ length: 200 }, () => ['GET', url, null, p]));
  const limited = answers.filter((r) => r.status === 429).length;
  if (limited === 0) {
    return exec.test.abort('200 directory requests at once met no 429: certctl\'s rate limiter is off (CERTCTL_RATE_LIMIT_ENABLED=true turns it on; make loadtest-limiter does)');
  }
  return Object.assign(info, { setup_burst: answers.length, setup_burst_429: limited });
}

// A well-formed ARI id that names no certificate: certctl must answer 404, not 400.
export function syntheticARIID(n) {
  const serial = new Uint8Array([0x7f, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
  return `bG9hZHRlc3Qtbm8tc3VjaC1ha2k.${encoding.b64encode(serial.buffer, 'rawurl')}`;
}

// How many certificates renewal-info asks about: tls-init writes this many CSRs.
export const ARI_CERTIFICATES = 8;

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

// issueForARI issues one certificate per CSR through the agent CSR path and returns what
// renewal-info needs. Throws a sentence on the first failure.
export function issueForARI(cfg, csrs, issuers) {
  const p = setupParams(cfg);
  // Every process of a split load (execution segments) runs this setup: each issues its own.
  const tag = cfg.segmentId ? `${cfg.runId}-${cfg.segmentId.toLowerCase()}` : cfg.runId;
  const agentID = registerAgent(cfg, `lt-ari-${tag}`, p);
  // certctl looks a renewal-info serial up under whichever issuer its registry yields first, so with
  // more than one a certificate it issued is found only some of the time (docs/certctl-findings.md#ari-any-issuer).
  const manyIssuers = issuers > 1;
  return csrs.map((c, i) => {
    const id = `lt-ari-${tag}-${i}`;
    const v = issueWithCSR(cfg, agentID, id, c, p);
    const ari = ariCertID(v.pem_chain);
    return { known: true, id: ari.id, certificate_id: id, serial: v.serial_number, leadingZero: /^0/.test(v.serial_number), manyIssuers };
  });
}

// issuerCount: the issuers certctl has enabled (its registry holds those).
export function issuerCount(cfg, p) {
  const res = http.get(`${cfg.baseUrl}/api/v1/issuers?per_page=500`, Object.assign({}, p, { tags: { phase: 'setup', name: 'GET /api/v1/issuers' } }));
  const body = res.status === 200 ? json(res) : null;
  if (!body || !Array.isArray(body.data)) throw new Error(`listing issuers answered HTTP ${res.status}: ${String(res.body).slice(0, 200)}`);
  return body.data.filter((i) => i.enabled !== false).length;
}

// acmeProbe: setup() of the ACME scenarios. Probes certctl, then issues the certificates renewal-info
// will ask about; either failing aborts the run in one sentence before any load.
export function acmeProbe(csrs) {
  return (cfg) => {
    const info = probeCertctl(cfg);
    const issue = (list) => {
      try {
        const issuers = issuerCount(cfg, setupParams(cfg));
        return Object.assign(info, { ari_issuers: issuers, ari_certificates: issueForARI(cfg, list, issuers) });
      } catch (e) {
        return exec.test.abort(`issuing the certificates renewal-info asks about failed: ${e.message}`);
      }
    };
    if (csrs.length) return issue(csrs);
    // An external certctl has no tls-init beside it: the same requests, each with a key made here.
    if (__ENV.LT_TARGET === 'external') return freshCSRs(ARI_CERTIFICATES).then(issue);
    return exec.test.abort('no CSRs under /tls/ari: tls-init writes them; is this the harness stack?');
  };
}

// freshCSRs(count): tls-init's certificate requests (CN ari-<i>.loadtest.example.com), new keys.
async function freshCSRs(count) {
  const out = [];
  for (let i = 1; i <= count; i++) {
    const cn = `ari-${i}.loadtest.example.com`;
    out.push({ cn, pem: await newCSRPem(cn) });
  }
  return out;
}

// acmeIteration: one directory, one nonce, one renewal-info; renewal-info alternates between a
// certificate issued in setup() and a synthetic id.
export function acmeIteration(cfg, known, n) {
  directory(cfg);
  newNonce(cfg);
  renewalInfo(cfg, n % 2 === 0 ? known[(n / 2) % known.length] : { known: false, id: syntheticARIID(n) });
}
