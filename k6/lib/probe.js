// setup() probe: before any load, prove the server is up, trusted and accepts the token, and fail in
// one sentence that says what to fix. exec.test.abort keeps handleSummary (and so the results) running.
import http from 'k6/http';
import exec from 'k6/execution';
import { untimedHeaders } from './certctl.js';

const TIMEOUT = '10s';

function reason(cfg, res, what) {
  if (res.status === 0) {
    if (/x509|certificate|tls/i.test(res.error || '')) {
      return `certctl's TLS certificate at ${cfg.baseUrl} is not trusted (${res.error}): point SSL_CERT_FILE at the CA that signed it`;
    }
    return `cannot reach certctl at ${cfg.baseUrl} (${res.error}): is the server up and CERTCTL_URL right?`;
  }
  return `${what} answered HTTP ${res.status}`;
}

export function probeCertctl(cfg, fail) {
  const abort = fail || ((msg) => exec.test.abort(msg));
  const params = { headers: untimedHeaders('setup'), timeout: TIMEOUT, tags: { phase: 'setup' }, responseCallback: http.expectedStatuses(200) };

  const health = http.get(`${cfg.baseUrl}/health`, params);
  if (health.status !== 200) {
    return abort(`certctl is not healthy: ${reason(cfg, health, 'GET /health')}`);
  }

  if (!cfg.token) {
    return abort('no API token: set CERTCTL_TOKEN to an admin API key of this certctl');
  }
  const authed = Object.assign({}, params, { headers: untimedHeaders('setup', { Authorization: `Bearer ${cfg.token}` }) });
  const who = http.get(`${cfg.baseUrl}/api/v1/auth/check`, authed);
  if (who.status === 401) {
    return abort('certctl rejected the API token (401 on /api/v1/auth/check): set CERTCTL_TOKEN to an admin API key of this server');
  }
  if (who.status !== 200) {
    return abort(`cannot check the API token: ${reason(cfg, who, 'GET /api/v1/auth/check')}`);
  }
  let admin = false;
  try {
    admin = who.json().admin === true;
  } catch (_) {
    return abort(`GET /api/v1/auth/check did not answer JSON (content type ${who.headers['Content-Type']}): is CERTCTL_URL a certctl API?`);
  }
  if (!admin) {
    return abort('the API token is not an admin key: certctl answers 403 to writes from read-only keys; use a key listed with :admin');
  }

  const v = http.get(`${cfg.baseUrl}/api/v1/version`, authed);
  let version = 'unknown';
  try {
    version = v.json().version || 'unknown';
  } catch (_) {
    // An old build without /api/v1/version is still worth loading; the summary says "unknown".
  }
  return { certctl_version: version, base_url: cfg.baseUrl };
}
