// `loadtest seed-external` (make seed-external CONFIRM=yes): the rows every scenario references, created
// through the API of a certctl the harness did not start, under the harness's ids (LT_*_ID, `lt-` and
// named "certctl-loadtest ..."). A row that exists is left as it is: the operator may have pointed an id at
// their own (LT_ISSUER_ID=their staging issuer). One iteration; the outcome is one line per row.
import http from 'k6/http';
import exec from 'k6/execution';
import { loadConfig } from '../lib/config.js';
import { probeCertctl } from '../lib/probe.js';
import { HARNESS_NAME, baseRows } from '../lib/external.js';

export const options = { vus: 1, iterations: 1, thresholds: { checks: ['rate==1'] } };
const cfg = loadConfig(__ENV);

export function setup() {
  return probeCertctl(cfg);
}

export default function () {
  const p = { headers: { Authorization: `Bearer ${cfg.token}`, 'Content-Type': 'application/json' }, timeout: '30s' };
  for (const row of baseRows(cfg)) {
    const got = http.get(`${cfg.baseUrl}${row.path}/${row.id}`, p);
    if (got.status === 200) {
      console.log(`seed-external: ${row.kind} ${row.id} exists, left as it is`);
      continue;
    }
    if (got.status !== 404) exec.test.abort(`seed-external: reading ${row.kind} ${row.id} answered HTTP ${got.status}: ${String(got.body).slice(0, 200)}`);
    if (!row.body) exec.test.abort(`seed-external: ${row.kind} ${row.id} does not exist, and the harness creates ${row.kind}s only under its own id: create it, or unset LT_${row.kind.toUpperCase()}_ID`);
    const res = http.post(`${cfg.baseUrl}${row.path}`, JSON.stringify(Object.assign({ id: row.id, name: `${HARNESS_NAME} ${row.kind}` }, row.body)), p);
    if (res.status !== 201 && res.status !== 200) {
      exec.test.abort(`seed-external: creating ${row.kind} ${row.id} answered HTTP ${res.status}: ${String(res.body).slice(0, 200)}`);
    }
    console.log(`seed-external: ${row.kind} ${row.id} created`);
  }
}

// The lines above are the outcome; k6's end-of-test summary of one iteration would only bury them.
export function handleSummary() {
  return {};
}
