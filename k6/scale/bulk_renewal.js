// Scale tier: a renewal wave. POST /api/v1/certificates/bulk-renew over the certificates
// seed/01_bulk_renewal_certs.sql wrote, BATCH_SIZE explicit ids per request, 5 requests/s.
// Every call must do real work: certctl skips a certificate that already has an open renewal job, so
// the walk never comes back to a certificate, and setup() refuses a pool too small for one pass at the
// configured rate and duration (the skipped total in the record shows what certctl still skipped).
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { probeCertctl } from '../lib/probe.js';
import { bulkRenew, seededIDs, BULK_RENEW_COUNTERS } from '../lib/certctl.js';
import { knob } from '../lib/config.js';

const BATCH = parseInt(knob(__ENV, 'BATCH_SIZE'), 10);

// internal/harness sizes the seed from the same rate and batch (bulkPool); setup() below catches a drift.
const LOAD = { executor: 'constant-arrival-rate', rate: 5, preAllocatedVUs: 20, maxVUs: 100 };

const s = defineScenario({
  name: 'bulk_renewal',
  tier: 'scale',
  budget: 'bulk_renewal',
  load: LOAD,
  probe: (cfg) => {
    const info = probeCertctl(cfg);
    const ids = seededIDs(cfg, 'certificates', 'loadtest-bulk-');
    if (ids.length === 0) return exec.test.abort('no loadtest-bulk-* certificates: the scale seed (seed/01_bulk_renewal_certs.sql) has not run');
    const needed = poolNeeded();
    if (ids.length < needed) {
      return exec.test.abort(`${ids.length} seeded certificates cover ${Math.floor(ids.length / BATCH / rateNow())} s of this load ` +
        `(${rateNow()} calls/s × ${BATCH} ids); after that every call would only take certctl's skip path. ` +
        `Seed at least ${needed} (SEED_BULK_CERTS=${needed}) or shorten DURATION.`);
    }
    return Object.assign(info, { batch_size: BATCH, pool: ids.length, pool_needed: needed, certificate_ids: ids });
  },
  counters: BULK_RENEW_COUNTERS,
});

// The rate in force (RATE_BULK_RENEWAL or the default) and the ids one pass needs.
function rateNow() {
  return s.cfg.rateFor('bulk_renewal', LOAD.rate);
}
function poolNeeded() {
  // k6 starts the first iteration at 0 s: rate × duration + 1 iterations in all.
  return (Math.ceil(rateNow() * s.cfg.durationSeconds) + 1) * BATCH;
}

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  // Each iteration its own batch: no certificate is asked for twice.
  const ids = data.certificate_ids;
  const start = (exec.scenario.iterationInTest * BATCH) % ids.length;
  bulkRenew(s.cfg, ids.slice(start, start + BATCH));
}
