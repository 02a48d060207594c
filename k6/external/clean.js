// `loadtest clean-external` (make clean-external CONFIRM=yes): removes from a certctl the harness did not
// start what its runs left there, and nothing else: certificates and agents whose id or name starts with
// `lt-`, then the base rows seed-external created (an `lt-` id and a "certctl-loadtest" name: an id the
// operator pointed at their own row is never touched). certctl's API archives a certificate rather
// than deleting it: the line says how many were archived.
import http from 'k6/http';
import exec from 'k6/execution';
import { loadConfig } from '../lib/config.js';
import { probeCertctl } from '../lib/probe.js';
import { HARNESS_NAME, PREFIX, baseRows, ours } from '../lib/external.js';

export const options = { vus: 1, iterations: 1 };
const cfg = loadConfig(__ENV);

export function setup() {
  return probeCertctl(cfg);
}

function listAll(path, p) {
  const rows = [];
  for (let page = 1; page < 10000; page++) {
    const res = http.get(`${cfg.baseUrl}${path}?per_page=500&page=${page}`, p);
    if (res.status !== 200) exec.test.abort(`clean-external: listing ${path} answered HTTP ${res.status}`);
    const body = res.json();
    const data = body.data || [];
    rows.push(...data);
    if (data.length === 0 || page * (body.per_page || 500) >= (body.total || 0)) break;
  }
  return rows;
}

export default function () {
  const p = { headers: { Authorization: `Bearer ${cfg.token}`, 'Content-Type': 'application/json' }, timeout: '30s' };
  const out = {};
  const remove = (kind, path, rows) => {
    let n = 0;
    let failed = 0;
    for (const r of rows) {
      // One name for every id: a series per certificate would be 15,000 of them after a 5-minute run.
      const res = http.del(`${cfg.baseUrl}${path}/${encodeURIComponent(r.id)}`, null, Object.assign({ tags: { name: `DELETE ${path}/{id}` } }, p));
      if (res.status === 200 || res.status === 204 || res.status === 404) n++;
      else {
        failed++;
        if (failed <= 3) console.warn(`clean-external: removing ${kind} ${r.id} answered HTTP ${res.status}: ${String(res.body).slice(0, 160)}`);
      }
    }
    out[kind] = { removed: n, failed };
  };
  remove('certificate', '/api/v1/certificates', listAll('/api/v1/certificates', p).filter((c) => ours(c) && String(c.status || '').toLowerCase() !== 'archived'));
  remove('agent', '/api/v1/agents', listAll('/api/v1/agents', p).filter(ours));
  // Base rows last: those of the harness that exist now. certctl refuses to delete a row another still
  // refers to (an issuer its certificates name) and deletes some with their owner (a team's owners go
  // with it), so the deletes get two passes, and what counts is which rows are gone at the end.
  const exists = (row) => http.get(`${cfg.baseUrl}${row.path}/${row.id}`, p);
  const mine = baseRows(cfg).filter((row) => {
    if (!row.id.startsWith(PREFIX)) return false;
    const got = exists(row);
    if (got.status !== 200) return false;
    const name = String((got.json() || {}).name || '');
    if (!name.startsWith(HARNESS_NAME)) {
      console.warn(`clean-external: ${row.kind} ${row.id} is named "${name}", not the harness's: left as it is`);
      return false;
    }
    return true;
  });
  for (let pass = 0; pass < 2; pass++) {
    for (const row of mine) {
      if (exists(row).status === 200) http.del(`${cfg.baseUrl}${row.path}/${row.id}`, null, p);
    }
  }
  for (const row of mine) {
    const left = exists(row);
    out[row.kind] = { removed: left.status === 404 ? 1 : 0, failed: left.status === 404 ? 0 : 1 };
    if (left.status !== 404) console.warn(`clean-external: ${row.kind} ${row.id} is still there (HTTP ${left.status} reading it): certctl refused to delete it`);
  }
  const failed = Object.values(out).reduce((a, r) => a + r.failed, 0);
  console.log(`clean-external: ${Object.entries(out).map(([k, r]) => `${r.removed} ${k}${r.removed === 1 ? '' : 's'} ${k === 'certificate' ? 'archived' : 'deleted'}${r.failed ? ` (${r.failed} refused)` : ''}`).join(', ')}`);
  if (failed) exec.test.fail(`clean-external: ${failed} removals were refused (see the lines above)`);
}

// The lines above are the outcome; k6's end-of-test summary of one iteration would only bury them.
export function handleSummary() {
  return {};
}
