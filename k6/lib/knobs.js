// Defaults of the knobs k6 reads, rendered from the registry (internal/harness/knobs.go) by
// `make docs`; a test fails when this block is stale. Read them through config.js's knob().
// <!-- generated:k6-knobs do not edit: make docs -->
export const DEFAULTS = Object.freeze({
  "DURATION": "5m",
  "REQUEST_TIMEOUT": "10s",
  "EXPECT_TLS_VERSION": "tls1.3",
  "CONNECTOR_<TYPE>_URL": "https://<type>/",
  "BATCH_SIZE": "50",
  "CERTCTL_SCHEDULER_JOB_PROCESSOR_INTERVAL": "30s",
  "CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL": "1h",
  "DEPLOY_CERTS_PER_TARGET": "250",
  "DEPLOY_PROBE_URL": "http://tlsprobe:8080",
  "DEPLOY_STUCK_AFTER": "75s",
  "DEPLOY_MASS_CERTS": "1000",
  "DEPLOY_MASS_DEADLINE": "5m",
  "DEPLOY_FLEET_AGENTS": "50",
  "DEPLOY_FLEET_TARGETS": "4",
  "DEPLOY_FLEET_ROTATION_DAYS": "47",
  "DEPLOY_FLEET_COMPRESSION": "10000",
  "ACME_FINALIZE_WORKAROUND": "0",
  "OCSP_RESPONDER_WORKAROUND": "0",
  "CERTCTL_URL": "https://certctl-server:8443",
  "LT_TEAM_ID": "lt-team",
  "LT_OWNER_ID": "lt-owner",
  "LT_POLICY_ID": "lt-policy",
  "LT_ISSUER_ID": "lt-issuer-local",
  "LT_PROFILE_ID": "lt-profile",
  "SPOTCHECK_REVOKE_WAYS": "ids,owner",
  "SPOTCHECK_CSR_DIR": "/tls/ari",
  "RESULTS_DIR": "results",
  "RUN_ID": "manual",
});
// <!-- end:k6-knobs -->
