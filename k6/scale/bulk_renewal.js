// Scale tier: a renewal wave. POST /api/v1/certificates/bulk-renew over the certificates
// seed/01_bulk_renewal_certs.sql wrote, BATCH_SIZE explicit ids per request, 5 requests/s.
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { probeCertctl } from '../lib/probe.js';
import { bulkRenew, seededIDs } from '../lib/certctl.js';

const BATCH = parseInt(__ENV.BATCH_SIZE || '50', 10);

const s = defineScenario({
  name: 'bulk_renewal',
  tier: 'scale',
  budget: 'bulk_renewal',
  load: { executor: 'constant-arrival-rate', rate: 5, preAllocatedVUs: 20, maxVUs: 100 },
  probe: (cfg) => {
    const info = probeCertctl(cfg);
    const ids = seededIDs(cfg, 'certificates', 'loadtest-bulk-');
    if (ids.length === 0) return exec.test.abort('no loadtest-bulk-* certificates: the scale seed (seed/01_bulk_renewal_certs.sql) has not run');
    return Object.assign(info, { batch_size: BATCH, certificate_ids: ids });
  },
  counters: { matched: 'bulk_renew_matched', enqueued: 'bulk_renew_enqueued', skipped: 'bulk_renew_skipped', failed: 'bulk_renew_failed' },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  // Walk the fleet batch by batch; after one full pass every certificate has an open renewal and
  // certctl skips it, which the skipped total shows.
  const ids = data.certificate_ids;
  const start = (exec.scenario.iterationInTest * BATCH) % ids.length;
  bulkRenew(s.cfg, ids.slice(start, start + BATCH));
}
