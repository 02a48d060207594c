// PKI tier: signed ACME orders at a steady rate, the way a fleet of ACME clients renews. Each order
// goes new-order → authorization → finalize (a fresh P-256 CSR) → order → certificate, and its chain
// must name the order and verify to the issuing CA. Every VU is an ACME client with its own account
// (a new one every ORDERS_PER_ACCOUNT orders).
import { defineScenario } from '../lib/scenario.js';
import { pkiProbe, acmeOrder, ACME_ORDER_COUNTERS, ACME_ORDER_TRENDS } from '../lib/pki.js';
import { acmeOrderMS } from '../lib/metrics.js';

const s = defineScenario({
  name: 'acme_order_flow',
  tier: 'pki',
  budget: 'acme_order_flow',
  // An order is six to eight signed requests, about 0.1 s at this rate; 20 VUs cover a slower certctl
  // up to 2 s an order, and maxVUs a queue beyond it.
  load: { executor: 'constant-arrival-rate', rate: 10, preAllocatedVUs: 20, maxVUs: 100 },
  probe: pkiProbe,
  latencyMetric: acmeOrderMS,
  trends: ACME_ORDER_TRENDS,
  counters: ACME_ORDER_COUNTERS,
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default async function (data) {
  await acmeOrder(s.cfg, data);
}
