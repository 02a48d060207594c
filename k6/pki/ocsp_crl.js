// PKI tier: revocation checks at the rate relying parties make them. OCSP by GET and by POST (a DER
// request) about a good, a revoked and an unknown serial, each answer's status, signature and times
// checked; the CRL fetched whole (signed by the CA, listing every revoked serial) and conditionally
// (ETag → 304). Setup signs and revokes the certificates asked about.
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { revocationProbe, revocationCheck, REVOCATION_COUNTERS } from '../lib/pki.js';

const s = defineScenario({
  name: 'ocsp_crl',
  tier: 'pki',
  budget: 'ocsp_crl',
  load: { executor: 'constant-arrival-rate', rate: 100, preAllocatedVUs: 20, maxVUs: 100 },
  probe: revocationProbe,
  trends: {
    ocsp_get: 'http_req_duration{endpoint:ocsp_get,expected_response:true}',
    ocsp_post: 'http_req_duration{endpoint:ocsp_post,expected_response:true}',
    crl: 'http_req_duration{endpoint:crl,expected_response:true}',
    crl_304: 'http_req_duration{endpoint:crl_304,expected_response:true}',
  },
  counters: REVOCATION_COUNTERS,
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default async function (data) {
  await revocationCheck(s.cfg, data, exec.scenario.iterationInTest);
}
