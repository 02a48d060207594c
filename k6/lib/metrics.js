// Every metric the harness records beyond k6's own, declared once. Journeys add to these symbols,
// scenario specs name them by symbol, and a budget (thresholds.json, spotchecks.json) may name only
// these or k6's built-in metrics: knownMetric() makes any other name an error at init, so a typo can
// no longer record zero and pass.
import { Counter, Rate, Trend } from 'k6/metrics';

// k6's built-in metrics (k6 v2 docs, "Built-in metrics"), the ones HTTP scenarios can produce.
export const BUILTIN = Object.freeze([
  'checks', 'data_received', 'data_sent', 'dropped_iterations', 'iteration_duration', 'iterations', 'vus', 'vus_max',
  'http_req_blocked', 'http_req_connecting', 'http_req_duration', 'http_req_failed', 'http_req_receiving',
  'http_req_sending', 'http_req_tls_handshaking', 'http_req_waiting', 'http_reqs',
]);

const declared = {};

// A custom metric carries its name, so a spec can record it by symbol.
function declare(Kind, name, isTime) {
  const m = new Kind(name, isTime === true);
  declared[name] = true;
  return Object.freeze({ name, add: (value, tags) => m.add(value, tags) });
}

// Connector tier: TCP connect + TLS handshake + request of one fresh connection (k6's
// http_req_duration leaves the first two out, and they are what the tier measures).
export const connectionDuration = declare(Trend, 'connection_duration', true);

// ACME: every /acme response, 1 if it is a 5xx (k6 sets no server_error tag a threshold could use).
export const acmeServerErrors = declare(Rate, 'acme_server_errors');
// ACME 429s: the shape RFC 8555 asks for (problem+json, rateLimited), and any other
// (docs/certctl-findings.md#rate-limiter).
export const acmeRateLimitShapeOK = declare(Counter, 'acme_rate_limit_shape_ok');
export const acmeRateLimitOther = declare(Counter, 'acme_rate_limit_other');
// Of those, certctl's own: text/plain, {"error":"Rate limit exceeded"} (the defect's signature).
export const acmeRateLimitTextPlain = declare(Counter, 'acme_rate_limit_text_plain');
// Renewal-info 404s for real certificates whose serial starts with a zero hex digit
// (docs/certctl-findings.md#ari-leading-zero), counted apart so the cause is named.
export const acmeARILeadingZero404 = declare(Counter, 'acme_ari_leading_zero_404');
// Renewal-info 404s for real certificates on a certctl with more than one issuer: it looks the serial
// up under an arbitrary one (docs/certctl-findings.md#ari-any-issuer), counted apart so the cause is named.
export const acmeARIOtherIssuer404 = declare(Counter, 'acme_ari_other_issuer_404');

// Bulk renewal: the totals certctl answers with, summed over the run.
export const bulkRenewMatched = declare(Counter, 'bulk_renew_matched');
export const bulkRenewEnqueued = declare(Counter, 'bulk_renew_enqueued');
export const bulkRenewSkipped = declare(Counter, 'bulk_renew_skipped');
export const bulkRenewFailed = declare(Counter, 'bulk_renew_failed');

// Spot checks.
export const bulkRevokeMatched = declare(Counter, 'bulk_revoke_matched');
export const bulkRevokeRevoked = declare(Counter, 'bulk_revoke_revoked');
export const bulkRevokeSkipped = declare(Counter, 'bulk_revoke_skipped');
export const bulkRevokeFailed = declare(Counter, 'bulk_revoke_failed');
export const bulkRevokePerCertificate = declare(Trend, 'bulk_revoke_ms_per_certificate', true);
// A bulk-revoke filter that matched fewer certificates than it covers (docs/certctl-findings.md#bulk-renew-filter-cap).
export const bulkRevokeFilterCapped = declare(Counter, 'bulk_revoke_filter_capped');
// The renewal scan (certctl's scheduler tick), as its Renewal jobs' created_at show it.
export const renewalScanMS = declare(Trend, 'renewal_scan_ms', true);
export const renewalScanPerCertificate = declare(Trend, 'renewal_scan_ms_per_certificate', true);
export const renewalScanDue = declare(Counter, 'renewal_scan_due');
export const renewalScanJobs = declare(Counter, 'renewal_scan_jobs');
export const renewalDispatchMS = declare(Trend, 'renewal_dispatch_ms', true);
export const renewalDrainMS = declare(Trend, 'renewal_drain_ms', true);
// A renewal scan watched to its end (drained): none when the watch failed or DURATION cut it off.
export const renewalScanComplete = declare(Counter, 'renewal_scan_complete');
export const inventoryWalkMS = declare(Trend, 'inventory_walk_ms', true);
export const inventoryWalkPer1000 = declare(Trend, 'inventory_walk_ms_per_1000_certs', true);
export const inventoryPages = declare(Counter, 'inventory_pages');
export const inventoryCertificates = declare(Counter, 'inventory_certificates');
export const inventoryCursorStuck = declare(Counter, 'inventory_cursor_stuck');

// Deploy tier (k6/lib/deploy.js), every sample tagged with its target_type: the loop from the renewal
// request to the target serving the new certificate, and its stages.
export const deployLoopMS = declare(Trend, 'deploy_loop_ms', true);
export const deploySignedMS = declare(Trend, 'deploy_signed_ms', true);
export const deployJobMS = declare(Trend, 'deploy_job_ms', true);
export const deployServedMS = declare(Trend, 'deploy_served_ms', true);
// 1 for a loop that ended with the new serial served and its chain verified, 0 otherwise.
export const deployLoopOK = declare(Rate, 'deploy_loop_ok');
// How loops that did not end so: the deployment job claimed by certctl's job processor and never run
// (docs/certctl-findings.md#job-processor-steals: it left Pending without its agent asking for work, by
// certctl's own audit trail), a job still open that its agent took or that never left Pending (stuck),
// a job that failed, a Completed job whose certificate the target never served, a renewal that never
// got signed.
export const deployStolen = declare(Counter, 'deploy_stolen');
export const deployStuck = declare(Counter, 'deploy_stuck');
export const deployFailed = declare(Counter, 'deploy_failed');
export const deployNotServed = declare(Counter, 'deploy_not_served');
export const deployNotSigned = declare(Counter, 'deploy_not_signed');
export const deployCompleted = declare(Counter, 'deploy_completed');
// Deployment jobs that failed because the F5 refused certctl's login: its connector logs in for every
// deployment and never logs out, and BIG-IP allows 100 live tokens per user
// (docs/certctl-findings.md#f5-token-leak). certctl's defect, counted apart from deploy_failed.
export const deployF5TokenLimit = declare(Counter, 'deploy_f5_token_limit');
// Mass rotation: from the bulk renewal to every target serving a new certificate (one sample a run),
// the deployments completed per minute over it, 1 per target that served a new certificate in time,
// and deployment jobs certctl retried (attempts > 1).
export const deployMassMS = declare(Trend, 'deploy_mass_ms', true);
export const deployMassPerMin = declare(Trend, 'deploy_mass_per_min');
export const deployMassOK = declare(Rate, 'deploy_mass_ok');
export const deployRetried = declare(Counter, 'deploy_retried');
// Rotation under traffic: handshakes of the client load that failed (refused, reset, a chain that does
// not verify), and handshakes after certctl marked the deployment Completed that still got another
// certificate than the new one.
// POST /certificates/{id}/deploy after a served loop: whether certctl created a deployment job for it.
export const deployEndpointJob = declare(Counter, 'deploy_endpoint_job');
export const deployEndpointNoJob = declare(Counter, 'deploy_endpoint_no_job');
export const deployHandshakeFailed = declare(Counter, 'deploy_handshake_failed');
// fleet_rotation, by certctl's own job timestamps: renewal job created → deployment job completed.
export const fleetLoopMS = declare(Trend, 'fleet_loop_ms', true);
export const fleetSignedMS = declare(Trend, 'fleet_signed_ms', true);
// 1 per renewal whose deployment completed by the end of the run, 0 per one that did not.
export const fleetDeployed = declare(Rate, 'fleet_deployed');
// Fleet jobs (renewal and deployment) open at each 10-second point of the run: the backlog over time.
export const fleetBacklog = declare(Trend, 'fleet_backlog');
export const fleetRenewals = declare(Counter, 'fleet_renewals');
export const fleetNotSigned = declare(Counter, 'fleet_not_signed');
export const fleetFailed = declare(Counter, 'fleet_failed');
export const fleetStuck = declare(Counter, 'fleet_stuck');
export const deployWrongSerial = declare(Counter, 'deploy_wrong_serial');

// PKI tier (k6/lib/pki.js). An ACME order from new-order to the downloaded chain, checked; each signed
// request that answered as expected, tagged with its step (new_account, new_order, authz, finalize,
// order, certificate); 1 per order that ended with a verified chain, 0 per one that did not.
export const acmeOrderMS = declare(Trend, 'acme_order_ms', true);
export const acmeStepMS = declare(Trend, 'acme_step_ms', true);
export const acmeOrderOK = declare(Rate, 'acme_order_ok');
// An order that failed, tagged with the step it failed at (failed_at: account, new_order, authz, finalize,
// order, certificate) and that step's HTTP status (status; 0: no answer, '' for an order polled to a
// state it should not have): the record counts each step, the summary each step's statuses.
export const acmeOrderFailed = declare(Counter, 'acme_order_failed');
// Challenge mode (the acme_http01_* scenarios): from the challenge's POST to the authorization certctl's
// validator made valid; an authorization certctl made invalid though the responder served the order's
// key authorization; and the orders that published a wrong one on purpose (ACME_CHALLENGE_WRONG), which
// certctl must refuse (tagged outcome: refused, accepted, or undecided when polling ran out). A wrong
// answer's order adds to acme_order_ok too: 1 when refused, its right end.
export const acmeValidationMS = declare(Trend, 'acme_validation_ms', true);
export const acmeChallengeInvalid = declare(Counter, 'acme_challenge_invalid');
export const acmeWrongAnswer = declare(Counter, 'acme_wrong_answer');
// A downloaded certificate its client revoked through revokeCert (ACME_REVOKE_SHARE of the orders), by
// outcome: ok (200), leading_zero_404 (certctl's known 404 for a serial starting with a zero digit),
// refused (another answer), unanswered (no answer within REQUEST_TIMEOUT).
export const acmeRevoked = declare(Counter, 'acme_revoked');
// certctl's defects and ACME's own answers on the order path: finalize's 500
// (docs/certctl-findings.md#acme-finalize), badNonce (retried once), 429 rateLimited.
export const acmeFinalize500 = declare(Counter, 'acme_finalize_500');
export const acmeBadNonce = declare(Counter, 'acme_bad_nonce');
export const acmeRateLimited = declare(Counter, 'acme_rate_limited');
// A signed request or nonce fetch that got no answer within REQUEST_TIMEOUT (status 0): the order fails,
// but certctl said nothing wrong; on a shared machine a stall of the host, not certctl, is the usual cause.
export const acmeUnanswered = declare(Counter, 'acme_unanswered');
// certctl's issuance path (create + agent CSR), timed from the create to the signing's answer, for
// certificates whose chain then verified; certificates signed (tagged path: agent or acme); a 202 that
// signed nothing; a chain that did not verify to the run's CA or named something else.
export const pkiIssueMS = declare(Trend, 'pki_issue_ms', true);
export const pkiIssued = declare(Counter, 'pki_issued');
export const pkiNotSigned = declare(Counter, 'pki_not_signed');
export const pkiBadChain = declare(Counter, 'pki_bad_chain');
// Revocation checks: 1 per OCSP answer that was successful, signed by the CA or a responder it
// delegated to, gave the serial's true status and sane times; OCSP's 500 (certctl's local issuer,
// docs/certctl-findings.md#ocsp-500); answers whose signature did not verify. 1 per CRL fetch that
// was signed by the CA and listed every revoked serial (or, conditional, answered 304); revoked serials
// the CRL left out.
export const pkiOCSPOK = declare(Rate, 'pki_ocsp_ok');
export const pkiOCSP500 = declare(Counter, 'pki_ocsp_500');
export const pkiOCSPUnverified = declare(Counter, 'pki_ocsp_unverified');
// POST answers of unknown for a good or revoked serial that starts with a zero hex digit: certctl looks
// the serial up without its leading zeros (docs/certctl-findings.md#ocsp-post-leading-zero).
export const pkiOCSPLeadingZero = declare(Counter, 'pki_ocsp_post_leading_zero');
export const pkiCRLOK = declare(Rate, 'pki_crl_ok');
export const pkiCRLMissingRevoked = declare(Counter, 'pki_crl_missing_revoked');

// Auth tier (k6/lib/oidc.js): one OIDC login's legs. Initiate is certctl's redirect to the provider,
// provider is Keycloak's form and its answer, callback is certctl's own work (the code exchange, the ID
// token's checks, the user and the session): the figure certctl's benchmarks publish.
export const oidcLoginMS = declare(Trend, 'oidc_login_ms', true);
export const oidcInitiateMS = declare(Trend, 'oidc_initiate_ms', true);
export const oidcProviderMS = declare(Trend, 'oidc_provider_ms', true);
export const oidcCallbackMS = declare(Trend, 'oidc_callback_ms', true);
export const oidcLoginOK = declare(Rate, 'oidc_login_ok');
// Failed logins by leg and reason (tag reason: initiate_401, callback_unmapped_groups, …).
export const oidcLoginFailed = declare(Counter, 'oidc_login_failed');
// A login's start answered 401 (certctl's API authentication in front of /auth/*: docs/certctl-findings.md
// #auth-routes-behind-auth) or 500 (the provider stored disabled: #oidc-provider-disabled).
export const oidcInitiate401 = declare(Counter, 'oidc_initiate_401');
export const oidcInitiate500 = declare(Counter, 'oidc_initiate_500');
// What the session path adds to a call: the same who-am-I (GET /api/v1/auth/check) by session cookie
// less by API key, in one iteration.
export const sessionAddedMS = declare(Trend, 'session_added_ms', true);
// A session still accepted 5 s after the provider's back-channel logout of its user.
export const backchannelSessionKept = declare(Counter, 'backchannel_session_kept');
// A session certctl should have refused (logged out, or ended at the provider) that it accepted.
export const sessionRevokedAccepted = declare(Counter, 'session_revoked_accepted');
export const sessionRevokedRefused = declare(Rate, 'session_revoked_refused');
// From a session's end (certctl's logout answered, or Keycloak's admin call returned) to certctl's first
// refusal of it.
export const logoutEffectiveMS = declare(Trend, 'logout_effective_ms', true);

// metricName('http_req_duration{endpoint:nonce}') -> 'http_req_duration'; throws on a malformed selector.
export function metricName(selector, where) {
  const m = /^([A-Za-z0-9_]+)(?:\{(.*)\})?$/.exec(selector);
  if (!m) throw new Error(`malformed metric selector "${selector}" in ${where}`);
  return m[1];
}

// knownMetric throws unless the selector names a k6 built-in or a metric declared above.
export function knownMetric(selector, where) {
  const name = metricName(selector, where);
  if (!BUILTIN.includes(name) && !declared[name]) {
    throw new Error(`${where} names metric "${name}", which neither k6 nor k6/lib/metrics.js defines: a typo would record nothing and pass`);
  }
  return name;
}

// customNames: every declared metric's name (tests, docs).
export function customNames() {
  return Object.keys(declared).sort();
}
