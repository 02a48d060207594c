// Spot check 3: bulk revocation of 100 issued certificates in one
// POST /api/v1/certificates/bulk-revoke {"reason":"superseded","certificate_ids":[…]} (admin only).
// certctl revokes only certificates with a certificate_versions row
// (docs/certctl-findings.md#revoke-needs-version), so setup() creates 100 certificates and issues each
// through the agent CSR path (POST /api/v1/agents/{id}/csr) and checks the version exists. The CSRs
// are tls-init's (/tls/ari/<i>.csr; SPOTCHECK_CSR_DIR elsewhere), reused in turn: certctl signs the
// same CSR for several certificates, each with its own serial. The certificates stay behind, revoked:
// run it against a server you can throw away.
import http from 'k6/http';
import { check } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import { probeCertctl } from '../lib/probe.js';
import { loadCSRs } from '../lib/acme.js';
import { defineSpotcheck, params, json, trendValues, countOf, round } from './lib/spotcheck.js';

const COUNT = 100;
const CSR_DIR = __ENV.SPOTCHECK_CSR_DIR || '/tls/ari';
const CSRS = loadCSRs(CSR_DIR, COUNT);

const totals = {
  matched: new Counter('bulk_revoke_matched'),
  revoked: new Counter('bulk_revoke_revoked'),
  skipped: new Counter('bulk_revoke_skipped'),
  failed: new Counter('bulk_revoke_failed'),
};
const perCert = new Trend('bulk_revoke_ms_per_certificate', true);

// Creates and issues COUNT certificates; throws a sentence on the first failure.
function issue(cfg) {
  if (CSRS.length === 0) throw new Error(`no CSRs in ${CSR_DIR} (1.csr, 2.csr, …): tls-init writes them in the stack; elsewhere point SPOTCHECK_CSR_DIR at a directory of CSRs`);
  // Unique per run, so the check can be repeated against a long-lived certctl (names are UNIQUE).
  const tag = `spot-${cfg.runId}-${Date.now().toString(36)}`;
  const p = Object.assign(params(cfg, { phase: 'setup' }, [200, 201, 202]), { timeout: '30s' });
  const agent = http.post(`${cfg.baseUrl}/api/v1/agents`, JSON.stringify({
    name: tag, hostname: `${tag}.loadtest.example.com`, os: 'linux', architecture: 'amd64', ip_address: '127.0.0.1', version: 'certctl-loadtest',
  }), p);
  if (agent.status !== 201) throw new Error(`registering the agent answered HTTP ${agent.status}: ${String(agent.body).slice(0, 200)}`);
  const agentID = agent.json().id;
  const ids = [];
  for (let i = 0; i < COUNT; i++) {
    const csr = CSRS[i % CSRS.length];
    const id = `${tag}-${i}`;
    const created = http.post(`${cfg.baseUrl}/api/v1/certificates`, JSON.stringify({
      id, name: id, common_name: csr.cn, sans: [csr.cn], issuer_id: cfg.ids.issuer, owner_id: cfg.ids.owner,
      team_id: cfg.ids.team, renewal_policy_id: cfg.ids.policy, certificate_profile_id: cfg.ids.profile, environment: 'loadtest',
    }), p);
    if (created.status !== 201) throw new Error(`creating ${id} answered HTTP ${created.status}: ${String(created.body).slice(0, 200)}`);
    const signed = http.post(`${cfg.baseUrl}/api/v1/agents/${agentID}/csr`, JSON.stringify({ csr_pem: csr.pem, certificate_id: id }), p);
    if (signed.status !== 202) throw new Error(`the CSR for ${id} answered HTTP ${signed.status}: ${String(signed.body).slice(0, 200)}`);
    // certctl answers 202 even when it signed nothing (issuer not loaded): the version is the proof.
    const versions = http.get(`${cfg.baseUrl}/api/v1/certificates/${id}/versions`, p);
    const v = versions.status === 200 && json(versions) && json(versions).data && json(versions).data[0];
    if (!v || !v.serial_number) throw new Error(`certctl accepted the CSR for ${id} but issued nothing (no certificate version): is issuer ${cfg.ids.issuer} enabled and loaded?`);
    ids.push(id);
  }
  return { ids, csrs_used: CSRS.length };
}

const s = defineSpotcheck({
  name: 'bulk_revoke',
  iterations: 1,
  latency: 'http_req_duration{phase:measured}',
  counters: { matched: 'bulk_revoke_matched', revoked: 'bulk_revoke_revoked', skipped: 'bulk_revoke_skipped', failed: 'bulk_revoke_failed' },
  probe: (cfg) => Object.assign(probeCertctl(cfg), issue(cfg)),
  figures: (data) => ({
    certificates: data.setup_data.ids.length,
    revoke_ms: round(trendValues(data, 'http_req_duration{phase:measured}').max, 1),
    per_certificate_ms: round(trendValues(data, 'bulk_revoke_ms_per_certificate').max, 2),
    total_revoked: countOf(data, 'bulk_revoke_revoked'),
    total_failed: countOf(data, 'bulk_revoke_failed'),
    total_skipped: countOf(data, 'bulk_revoke_skipped'),
  }),
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  const ids = data.ids;
  const res = http.post(`${s.cfg.baseUrl}/api/v1/certificates/bulk-revoke`, JSON.stringify({ reason: 'superseded', certificate_ids: ids }),
    Object.assign(params(s.cfg, { phase: 'measured', name: 'POST /api/v1/certificates/bulk-revoke' }), { timeout: '120s' }));
  const b = res.status === 200 ? json(res) : null;
  if (b) {
    totals.matched.add(b.total_matched || 0);
    totals.revoked.add(b.total_revoked || 0);
    totals.skipped.add(b.total_skipped || 0);
    totals.failed.add(b.total_failed || 0);
    if (b.total_failed) console.error(`bulk_revoke: ${b.total_failed} failed, first: ${JSON.stringify((b.errors || [])[0])}`);
  }
  perCert.add(res.timings.duration / ids.length);
  check(res, {
    'bulk-revoke: 200 with totals': () => !!b && typeof b.total_revoked === 'number',
    'bulk-revoke: every certificate revoked': () => !!b && b.total_revoked === ids.length,
  }, { phase: 'measured' });
  if (!b) console.error(`bulk_revoke: HTTP ${res.status}: ${String(res.body).slice(0, 300)}`);
}
