// PKI tier journeys: certctl as a certificate authority. A signed ACME order from account to chain
// (RFC 8555, JWS in jose.js, the CSR in der.js), certctl's own issuance path (create + agent CSR), and
// revocation checks (OCSP, CRL). certctl's defects on these paths are counted under their own names
// (docs/certctl-findings.md), never folded into a latency.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import encoding from 'k6/encoding';
import { newAccountKey, jws, b64url } from './jose.js';
import { csrDER, newCSRPem, pemBlocks, certNames, signedBy, ariCertID } from './der.js';
import { ocspRequest, parseOCSP, ocspVerified, saneTimes, parseCRL, crlVerified } from './ocsp.js';
import { probeCertctl } from './probe.js';
import { knob } from './config.js';
import { json, setupParams, registerAgent, untimedHeaders } from './certctl.js';
import {
  acmeOrderMS, acmeStepMS, acmeOrderOK, acmeOrderFailed, acmeValidationMS, acmeChallengeInvalid, acmeWrongAnswer, acmeRevoked, acmeFinalize500, acmeBadNonce, acmeRateLimited, acmeUnanswered, acmeServerErrors,
  pkiIssueMS, pkiIssued, pkiNotSigned, pkiBadChain, pkiOCSPOK, pkiOCSP500, pkiOCSPUnverified, pkiOCSPLeadingZero, pkiCRLOK, pkiCRLMissingRevoked,
} from './metrics.js';

// An account places this many orders, then the VU opens a new one: certctl allows an account 100
// orders an hour (docs/certctl-findings.md#acme-account-limits), and an operator's fleet is many
// clients, not one.
export const ORDERS_PER_ACCOUNT = 20;
const POLL_S = 0.1;
const POLLS = 50;
// certctl's validator has 30 s per challenge once the pool admits it (validators.go), and waits for a
// slot without a bound: polling stops at 60 s, and an authorization still pending then is undecided.
const VALIDATION_WAIT_S = 60;

// The steps an order can fail at: account is new-account's, the others ACME_STEPS'.
export const ACME_FAILED_AT = ['account', 'new_order', 'authz', 'finalize', 'order', 'certificate'];
// What every signed order's record counts, then each step it can fail at.
const ORDER_COUNTERS = {
  finalize_500: acmeFinalize500,
  bad_nonce: acmeBadNonce,
  rate_limited: acmeRateLimited,
  unanswered: acmeUnanswered,
  bad_chain: pkiBadChain,
  revoked: 'acme_revoked{outcome:ok}',
  revoke_leading_zero_404: 'acme_revoked{outcome:leading_zero_404}',
  revoke_refused: 'acme_revoked{outcome:refused}',
  revoke_unanswered: 'acme_revoked{outcome:unanswered}',
  issued: pkiIssued,
};
const failedAt = (steps) => Object.fromEntries(steps.map((st) => [`failed_${st}`, `acme_order_failed{failed_at:${st}}`]));
export const ACME_ORDER_COUNTERS = Object.freeze(Object.assign({}, ORDER_COUNTERS, failedAt(ACME_FAILED_AT)));

// Each signed step's latency, the way a CA benchmark reports them side by side with the whole order.
export const ACME_STEPS = ['new_account', 'new_order', 'authz', 'finalize', 'order', 'certificate', 'revoke'];
export const ACME_ORDER_TRENDS = Object.freeze(Object.fromEntries(ACME_STEPS.map((st) => [st, `acme_step_ms{step:${st}}`])));

// Challenge mode: the order's authorization is validated by certctl fetching http-01 from the stack's
// challenge responder (docker-compose.yml's challenge-responder, whose loadnet aliases are the order
// names: CHALLENGE_HOSTS of them). The steps add the challenge's POST and the authorization's polls, and
// validation (respond → valid) is a trend of its own.
export const CHALLENGE_HOSTS = 16;
export const RESPONDER_URL = 'http://challenge-responder:8055';
export const ACME_CHALLENGE_STEPS = ['new_account', 'new_order', 'authz', 'challenge', 'authz_poll', 'finalize', 'order', 'certificate', 'revoke'];
export const ACME_CHALLENGE_TRENDS = Object.freeze(Object.assign(
  Object.fromEntries(ACME_CHALLENGE_STEPS.map((st) => [st, `acme_step_ms{step:${st}}`])), { validation: acmeValidationMS }));
export const ACME_CHALLENGE_FAILED_AT = ['account', 'new_order', 'authz', 'publish', 'challenge', 'validation', 'finalize', 'order', 'certificate'];
export const ACME_CHALLENGE_COUNTERS = Object.freeze(Object.assign({}, ORDER_COUNTERS, {
  challenge_invalid: acmeChallengeInvalid,
  wrong_refused: 'acme_wrong_answer{outcome:refused}',
  wrong_accepted: 'acme_wrong_answer{outcome:accepted}',
  wrong_undecided: 'acme_wrong_answer{outcome:undecided}',
}, failedAt(ACME_CHALLENGE_FAILED_AT)));

// The validator pool's saturation (acme_http01_saturated): ACME_SLOW_VUS clients order names the slow
// responder holds (docker-compose.yml's challenge-slow: the fault proxy, CHALLENGE_SLOW_LATENCY before every
// answer, in front of the responder), so their validations fill certctl's http-01 slots; SATURATION_FAST_VUS
// clients order names the responder answers at once, and their validation is what the pool's queue costs
// the other orders. Every sample of a client carries its part (part:slow, part:fast).
export const SLOW_HOSTS = 16;
export const SLOW_RESPONDER_URL = 'http://challenge-slow:80';
export const SATURATION_FAST_VUS = 2;
const PARTS = ['fast', 'slow'];
export const ACME_SATURATION_TRENDS = Object.freeze(Object.assign({}, ...PARTS.map((p) => ({
  [`validation_${p}`]: `acme_validation_ms{part:${p}}`, [`order_${p}`]: `acme_order_ms{part:${p}}`,
}))));
export const ACME_SATURATION_COUNTERS = Object.freeze(Object.assign({}, ACME_CHALLENGE_COUNTERS, ...PARTS.map((p) => ({
  [`issued_${p}`]: `pki_issued{part:${p}}`, [`challenge_invalid_${p}`]: `acme_challenge_invalid{part:${p}}`,
  [`failed_validation_${p}`]: `acme_order_failed{failed_at:validation,part:${p}}`,
}))));

// slowVUs: ACME_SLOW_VUS, the clients whose validations hold the pool.
export function slowVUs(env) {
  const raw = knob(env || __ENV, 'ACME_SLOW_VUS');
  const n = Number(raw);
  if (!(Number.isInteger(n) && n > 0)) throw new Error(`ACME_SLOW_VUS="${raw}": a whole number of clients, at least 1`);
  return n;
}

// saturationProbe is challengeProbe with the slow responder up; the latency it holds is in the record.
export async function saturationProbe(cfg) {
  const info = await challengeProbe(cfg);
  if (!info) return info;
  const h = http.get(`${SLOW_RESPONDER_URL}/fault-proxy/stats`, { timeout: '5s', headers: untimedHeaders('setup', {}) });
  if (h.status !== 200) throw new Error(`the slow challenge responder (${SLOW_RESPONDER_URL}) answered HTTP ${h.status}: is the stack's challenge-slow up?`);
  return Object.assign(info, { slow_latency: knob(__ENV, 'CHALLENGE_SLOW_LATENCY'), slow_vus: slowVUs(), fast_vus: SATURATION_FAST_VUS });
}

// saturatedOrder: one order of this client's part; the first ACME_SLOW_VUS clients are the slow ones.
export async function saturatedOrder(cfg, data) {
  const part = exec.vu.idInTest <= data.slow_vus ? 'slow' : 'fast';
  exec.vu.metrics.tags.part = part;
  return acmeOrder(cfg, data, 'http-01', { slow: part === 'slow' });
}

export const ISSUANCE_COUNTERS = Object.freeze({
  issued: pkiIssued,
  finalize_500: acmeFinalize500,
  not_signed: pkiNotSigned,
  bad_chain: pkiBadChain,
});

function contentType(r) {
  return String(r.headers['Content-Type'] || '').split(';')[0].trim().toLowerCase();
}

function problem(r) {
  const b = contentType(r) === 'application/problem+json' ? json(r) : null;
  return b && typeof b.type === 'string' ? b : null;
}

// --- Setup ---

// pkiProbe: certctl is up and takes the token; the issuing CA is read from a certificate certctl signs
// through the agent path, so every chain the load gets can be verified to it.
export async function pkiProbe(cfg) {
  const info = probeCertctl(cfg);
  if (!info) return info;
  const p = setupParams(cfg);
  // Named after the scenario too: PKI scenarios of one run may share a stack (loadtest fleet's mix runs
  // acme_order_flow beside ocsp_crl), and certctl refuses a second agent or certificate of one name.
  const own = `lt-pki-${cfg.runId}-${Object.keys(exec.test.options.scenarios || {})[0] || 'setup'}`.replace(/_/g, '-');
  const agent = registerAgent(cfg, own, p);
  const cn = `${own}-ca.loadtest.example.com`;
  const v = issueAgentPath(cfg, agent, `${own}-ca`, { cn, pem: await newCSRPem(cn) }, p);
  if (!v.ok) throw new Error(`certctl did not sign the setup certificate through the agent path: ${v.why}`);
  const blocks = pemBlocks(v.pem);
  if (blocks.length < 2) throw new Error('the agent path answered a chain without its issuing CA');
  return Object.assign(info, {
    acme_finalize_workaround: knob(__ENV, 'ACME_FINALIZE_WORKAROUND') === '1',
    issuance_path: issuancePath(),
    ocsp_responder_workaround: knob(__ENV, 'OCSP_RESPONDER_WORKAROUND') === '1',
    acme_revoke_share: shareKnob('ACME_REVOKE_SHARE'),
    agent_id: agent, ca_der: b64url(blocks[blocks.length - 1]), directory: readDirectory(cfg, cfg.ids.profile, p) });
}

// challengeProbe is pkiProbe with the challenge-mode profile's directory (seed/00_base.sql: the profile
// id with -challenge) and the responder answering; ACME_CHALLENGE_WRONG is the share of orders that
// publish a wrong key authorization, which certctl must refuse.
export async function challengeProbe(cfg) {
  const info = await pkiProbe(cfg);
  if (!info) return info;
  const wrong = shareKnob('ACME_CHALLENGE_WRONG');
  const h = http.get(`${RESPONDER_URL}/healthz`, { timeout: '5s', headers: untimedHeaders('setup', {}) });
  if (h.status !== 200) throw new Error(`the challenge responder (${RESPONDER_URL}) answered HTTP ${h.status}: is the stack's challenge-responder up?`);
  return Object.assign(info, { challenge_wrong: wrong, challenge_directory: readDirectory(cfg, `${cfg.ids.profile}-challenge`, setupParams(cfg)) });
}

// shareKnob reads a knob that is a share of the orders, 0 to 1, and refuses any other value.
function shareKnob(name) {
  const v = Number(knob(__ENV, name));
  if (!(v >= 0 && v <= 1) || knob(__ENV, name) === '') throw new Error(`${name}="${knob(__ENV, name)}": a share of orders between 0 and 1`);
  return v;
}

function readDirectory(cfg, profile, p) {
  const r = http.get(`${cfg.baseUrl}/acme/profile/${profile}/directory`, Object.assign({}, p, { headers: untimedHeaders('setup', { Authorization: `Bearer ${cfg.token}` }) }));
  const d = r.status === 200 && contentType(r) === 'application/json' ? json(r) : null;
  if (!d || !d.newAccount || !d.newOrder || !d.newNonce) {
    throw new Error(`the ACME directory of profile ${profile} answered HTTP ${r.status} ${contentType(r)}: is CERTCTL_ACME_SERVER_ENABLED set and the profile seeded?`);
  }
  return d;
}

function issuancePath() {
  const v = knob(__ENV, 'PKI_ISSUANCE_PATH');
  if (v !== 'agent' && v !== 'acme') throw new Error(`PKI_ISSUANCE_PATH="${v}": use agent (create + agent CSR) or acme (a signed order)`);
  return v;
}

// --- certctl's issuance path: create the certificate, have its agent's CSR signed ---

// issueAgentPath(cfg, agent, id, {cn, pem}, params) -> { ok, why, pem, ms }: the two requests that make
// certctl sign, their durations summed, then the version that proves it signed (certctl says 202 even when it
// signed nothing).
export function issueAgentPath(cfg, agent, id, csr, p) {
  const created = http.post(`${cfg.baseUrl}/api/v1/certificates`, JSON.stringify({
    id, name: id, common_name: csr.cn, sans: [csr.cn], issuer_id: cfg.ids.issuer, owner_id: cfg.ids.owner,
    team_id: cfg.ids.team, renewal_policy_id: cfg.ids.policy, environment: 'loadtest',
  }), Object.assign({}, p, { tags: Object.assign({ name: 'POST /api/v1/certificates', step: 'create' }, p.tags || {}) }));
  if (created.status !== 201) return { ok: false, why: `create answered HTTP ${created.status}` };
  const signed = http.post(`${cfg.baseUrl}/api/v1/agents/${agent}/csr`, JSON.stringify({ csr_pem: csr.pem, certificate_id: id }),
    Object.assign({}, p, { tags: Object.assign({ name: 'POST /api/v1/agents/{id}/csr', step: 'sign' }, p.tags || {}) }));
  const ms = created.timings.duration + signed.timings.duration;
  if (signed.status !== 202) return { ok: false, why: `the CSR answered HTTP ${signed.status}`, ms };
  // Part of what is judged (a fault on it must be seen), not of what is timed.
  const versions = http.get(`${cfg.baseUrl}/api/v1/certificates/${id}/versions`, Object.assign({}, p, {
    tags: Object.assign({ name: 'GET /api/v1/certificates/{id}/versions', step: 'verify' }, p.tags || {}),
    responseCallback: http.expectedStatuses(200),
  }));
  if (versions.status !== 200) return { ok: false, why: `reading the certificate's versions answered HTTP ${versions.status}`, ms };
  const b = json(versions);
  const v = b && b.data && b.data[0];
  if (!v || !v.pem_chain) return { ok: false, why: 'certctl answered 202 and stored no certificate version', ms, unsigned: true };
  return { ok: true, pem: v.pem_chain, serial: v.serial_number, ms };
}

// issuance: one certificate through certctl's issuance path, judged: signed, names right, chain to the CA.
// issuance: one certificate through the path PKI_ISSUANCE_PATH names: `agent` (certctl's create + the
// agent's CSR) or `acme` (a whole signed order, its time the issuance's).
export async function issuance(cfg, data) {
  if (data.issuance_path === 'acme') {
    const out = await acmeOrder(cfg, data);
    if (out.ok) pkiIssueMS.add(out.ms, { path: 'acme' });
    return;
  }
  const n = exec.scenario.iterationInTest;
  const id = `lt-pki-${cfg.runId}-${n}`;
  const cn = `${id}.loadtest.example.com`;
  const csr = { cn, pem: await newCSRPem(cn) };
  const p = {
    headers: { Authorization: `Bearer ${cfg.token}`, 'Content-Type': 'application/json' },
    timeout: cfg.requestTimeout, responseCallback: http.expectedStatuses(201, 202), tags: { path: 'agent' },
  };
  const out = issueAgentPath(cfg, data.agent_id, id, csr, p);
  if (out.unsigned) pkiNotSigned.add(1, { path: 'agent' });
  const good = out.ok && await verifyChain(out.pem, caDER(data), cn, { path: 'agent' });
  if (good) {
    pkiIssueMS.add(out.ms, { path: 'agent' });
    pkiIssued.add(1, { path: 'agent' });
  }
  check(out, { 'issuance: certctl signed a certificate for the CSR, its chain verifying to the CA': () => good }, { path: 'agent' });
}

// The CA travels from setup() as base64url DER (setup data is JSON).
let ca = null;
function caDER(data) {
  if (!ca) ca = new Uint8Array(encoding.b64decode(data.ca_der, 'rawurl'));
  return ca;
}

// verifyChain: the leaf names the order's name, and it and its chain verify to the run's issuing CA.
async function verifyChain(pem, ca, name, tags) {
  let ok = false;
  try {
    const chain = pemBlocks(pem);
    const names = certNames(chain[0]);
    ok = chain.length >= 1 && names.cn === name && names.dns.length === 1 && names.dns[0] === name && await signedBy(chain[0], ca);
  } catch (e) {
    ok = false;
  }
  if (!ok) pkiBadChain.add(1, tags);
  return ok;
}

// --- ACME: a signed order from account to chain ---

// Per VU: the account key, its URL (kid), the next nonce and how many orders it placed.
let acct = null;
let nonce = '';

function keepNonce(r) {
  const n = r.headers['Replay-Nonce'];
  if (n) nonce = n;
}

function freshNonce(cfg, dir) {
  const r = http.head(dir.newNonce, {
    headers: { Authorization: `Bearer ${cfg.token}` }, timeout: cfg.requestTimeout,
    tags: { endpoint: 'nonce', name: 'ACME nonce' }, responseCallback: http.expectedStatuses(200),
  });
  acmeServerErrors.add(r.status >= 500);
  if (r.status === 0) acmeUnanswered.add(1, { endpoint: 'nonce' });
  keepNonce(r);
  return nonce;
}

// post signs payload for url with the VU's account and posts it; a badNonce is counted and retried once
// (RFC 8555 section 6.5) with a fresh nonce: certctl's error answers carry none.
async function post(cfg, dir, key, kid, url, payload, step, expected) {
  for (let attempt = 0; ; attempt++) {
    const n = nonce || freshNonce(cfg, dir);
    nonce = '';
    const header = kid ? { kid, nonce: n, url } : { nonce: n, url };
    const body = await jws(key, header, payload);
    const r = http.post(url, body, {
      headers: { Authorization: `Bearer ${cfg.token}`, 'Content-Type': 'application/jose+json' },
      timeout: cfg.requestTimeout,
      tags: { endpoint: step, name: `ACME ${step}` },
      responseCallback: http.expectedStatuses(...expected),
    });
    keepNonce(r);
    acmeServerErrors.add(r.status >= 500);
    if (r.status === 0) acmeUnanswered.add(1, { endpoint: step });
    const pr = problem(r);
    if (pr && pr.type === 'urn:ietf:params:acme:error:badNonce') {
      acmeBadNonce.add(1);
      if (attempt === 0) continue;
    }
    if (r.status === 429) acmeRateLimited.add(1, { endpoint: step });
    if (expected.includes(r.status)) acmeStepMS.add(r.timings.duration, { step });
    return r;
  }
}

// The status new-account last answered in this VU: what a failed order's account step records.
let lastAccountStatus = 0;

async function account(cfg, dir) {
  if (acct && acct.orders < ORDERS_PER_ACCOUNT) return acct;
  const key = await newAccountKey();
  const r = await post(cfg, dir, key, null, dir.newAccount, { termsOfServiceAgreed: true, contact: [`mailto:lt-${cfg.runId}@loadtest.example.com`] }, 'new_account', [201]);
  const kid = r.headers['Location'];
  const ok = check(r, { 'new-account: 201 with the account URL in Location': (x) => x.status === 201 && !!kid });
  acct = ok ? { key, kid, orders: 0 } : null;
  lastAccountStatus = r.status;
  return acct;
}

// acmeOrder: one whole order. Returns the order's outcome; every step's check is recorded. With
// challenge 'http-01' the order goes to the challenge-mode profile, and its authorization is validated by
// certctl against the responder (authorizeHTTP01).
// opts.slow: a name the slow responder holds (acme_http01_saturated).
export async function acmeOrder(cfg, data, challenge, opts) {
  const dir = challenge ? data.challenge_directory : data.directory;
  const a = await account(cfg, dir);
  if (!a) return fail('account', { status: lastAccountStatus });
  a.orders++;
  const iter = exec.scenario.iterationInTest;
  // Challenge mode: names the responder answers for (its loadnet aliases); several orders share one.
  const name = !challenge ? `lt-acme-${cfg.runId}-${iter}.loadtest.example.com`
    : opts && opts.slow ? `slow-${iter % SLOW_HOSTS}.challenge.loadtest.example.com`
    : `ch-${iter % CHALLENGE_HOSTS}.challenge.loadtest.example.com`;
  const wrong = !!challenge && inShare(iter, data.challenge_wrong);
  const t0 = Date.now();

  const created = await post(cfg, dir, a.key, a.kid, dir.newOrder, { identifiers: [{ type: 'dns', value: name }] }, 'new_order', [201]);
  const order = created.status === 201 ? json(created) : null;
  const orderURL = created.headers['Location'];
  if (created.status === 429) acct = null; // this account's open orders or hourly orders are used up
  if (!check(created, { 'new-order: 201 with the order, its authorizations and finalize URL': () => !!order && !!orderURL && Array.isArray(order.authorizations) && !!order.finalize })) return fail('new_order', created);

  for (const az of order.authorizations) {
    const r = await post(cfg, dir, a.key, a.kid, az, '', 'authz', [200]);
    const b = r.status === 200 ? json(r) : null;
    if (challenge) {
      const out = await authorizeHTTP01(cfg, dir, a, az, r, b, wrong);
      if (out) return out;
      continue;
    }
    // trust_authenticated profiles (the harness's) authorise the API key's holder: valid, no challenge.
    if (!check(r, { 'authz: valid without a challenge (trust_authenticated)': () => !!b && b.status === 'valid' })) return fail('authz', r);
  }

  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const csr = b64url(await csrDER(pair, name, [name]));
  const fin = await post(cfg, dir, a.key, a.kid, order.finalize, { csr }, 'finalize', [200]);
  if (fin.status === 500) {
    // certctl's store failure, by its own answer: serverInternal and no Replay-Nonce (a 500 of another
    // making, a proxy's or a crash's, is only a failure).
    const pr = problem(fin);
    if (pr && pr.type === 'urn:ietf:params:acme:error:serverInternal' && !fin.headers['Replay-Nonce']) acmeFinalize500.add(1);
    // The order stays `processing` and holds one of the account's five open orders: start afresh.
    acct = null;
  }
  let state = fin.status === 200 ? json(fin) : null;
  if (!check(fin, { 'finalize: 200 with the order': () => !!state })) return fail('finalize', fin);

  let polled = fin;
  for (let i = 0; state && state.status === 'processing' && i < POLLS; i++) {
    await sleepAsync(POLL_S);
    polled = await post(cfg, dir, a.key, a.kid, orderURL, '', 'order', [200]);
    state = polled.status === 200 ? json(polled) : null;
  }
  if (!check(state, { 'order: valid with a certificate URL': (s) => !!s && s.status === 'valid' && !!s.certificate })) return fail('order', polled);

  const dl = await post(cfg, dir, a.key, a.kid, state.certificate, '', 'certificate', [200]);
  const took = Date.now() - t0; // the order as its client waits for it: the chain's check is ours
  const good = dl.status === 200 && contentType(dl) === 'application/pem-certificate-chain' &&
    await verifyChain(String(dl.body), caDER(data), name, { path: 'acme' });
  if (!check(dl, { 'certificate: a PEM chain whose leaf names the order and verifies to the CA': () => good })) return fail('certificate', dl);

  acmeOrderMS.add(took);
  acmeOrderOK.add(1);
  pkiIssued.add(1, { path: 'acme' });
  // The journey's last leg, as Boulder's load plan ends its orders: the issued certificate revoked by its
  // client, for ACME_REVOKE_SHARE of the orders spread through the run. The order was issued either way.
  if (inShare(iter, data.acme_revoke_share || 0)) await revoke(cfg, dir, a, String(dl.body));
  return { ok: true, ms: took };
}

// revoke asks certctl to revoke a certificate it issued to this account (RFC 8555 section 7.6: the
// leaf's DER, signed with the account's key; reason 4, superseded), timed as the step revoke. A serial
// whose hex starts with a zero digit gets 404 from certctl (docs/certctl-findings.md#ari-leading-zero:
// revoke-cert's lookup drops the zero, as renewal-info's does): such a 404 is counted apart
// (revoke_leading_zero_404), timed under a step of its own, and fails no check.
async function revoke(cfg, dir, a, chainPEM) {
  const leadingZero = serialStartsWithZero(chainPEM);
  const r = await post(cfg, dir, a.key, a.kid, dir.revokeCert, { certificate: b64url(pemBlocks(chainPEM)[0]), reason: 4 },
    leadingZero ? 'revoke_leading_zero' : 'revoke', leadingZero ? [200, 404] : [200]);
  if (leadingZero && r.status === 404) {
    acmeRevoked.add(1, { outcome: 'leading_zero_404' });
    return;
  }
  acmeRevoked.add(1, { outcome: r.status === 200 ? 'ok' : r.status === 0 ? 'unanswered' : 'refused' });
  check(r, { 'revoke-cert: 200, the certificate revoked': (x) => x.status === 200 });
}

// serialStartsWithZero says whether a PEM certificate's serial, written as certctl's CA stores it (40 hex
// digits, zero-padded), starts with a zero digit: whether its hex without leading zeros is shorter.
export function serialStartsWithZero(pem) {
  return ariCertID(pem).serialHex.replace(/^0+/, '').length < 40;
}

// inShare says whether order iter (0, 1, …) is one of share of the orders (a wrong key authorization
// published, a certificate revoked): spread evenly through the run (every 1/share-th order), so that any
// stretch of it has some.
export function inShare(iter, share) {
  return share > 0 && Math.floor((iter + 1) * share) > Math.floor(iter * share);
}

// authorizeHTTP01 answers a pending authorization's http-01 challenge: the key authorization (RFC 8555
// section 8.1: token.thumbprint, or a wrong one for the orders that test certctl's refusal) published at
// the responder, the challenge POSTed, the authorization polled until certctl's validator decided.
// Returns the order's outcome when it ends here, null when the authorization is valid.
async function authorizeHTTP01(cfg, dir, a, azURL, r, b, wrong) {
  const ch = b && Array.isArray(b.challenges) ? b.challenges.find((c) => c.type === 'http-01') : null;
  if (!check(r, { 'authz: pending with an http-01 challenge (challenge mode)': () => !!b && b.status === 'pending' && !!ch && !!ch.url && !!ch.token })) return fail('authz', r);
  const keyAuth = wrong ? `${ch.token}.not-this-account` : `${ch.token}.${a.key.thumbprint}`;
  const pub = http.post(`${RESPONDER_URL}/add-http01`, JSON.stringify({ token: ch.token, content: keyAuth }), {
    headers: { 'Content-Type': 'application/json' }, timeout: cfg.requestTimeout,
    tags: { endpoint: 'responder', name: 'responder add-http01' }, responseCallback: http.expectedStatuses(200),
  });
  if (!check(pub, { 'responder: the key authorization published': (x) => x.status === 200 })) return fail('publish', pub);
  const t0 = Date.now();
  const resp = await post(cfg, dir, a.key, a.kid, ch.url, {}, 'challenge', [200]);
  if (!check(resp, { 'challenge: accepted for validation': (x) => x.status === 200 })) return fail('challenge', resp);
  let state = null;
  let polled = resp;
  // Polls back off (50 ms doubling to 1 s), as ACME clients do: at 25 clients a fixed 100 ms would be
  // 250 signed polls a second, load of the harness's making.
  for (let wait = 0.05; Date.now() - t0 < VALIDATION_WAIT_S * 1000; wait = Math.min(1, wait * 2)) {
    await sleepAsync(wait);
    polled = await post(cfg, dir, a.key, a.kid, azURL, '', 'authz_poll', [200]);
    const z = polled.status === 200 ? json(polled) : null;
    if (z && (z.status === 'valid' || z.status === 'invalid')) {
      state = z.status;
      break;
    }
  }
  const took = Date.now() - t0;
  // Decided or given up on, the token is done with: the responder keeps nothing an order no longer needs.
  http.post(`${RESPONDER_URL}/del-http01`, JSON.stringify({ token: ch.token }), {
    headers: { 'Content-Type': 'application/json' }, timeout: cfg.requestTimeout,
    tags: { endpoint: 'responder', name: 'responder del-http01' }, responseCallback: http.expectedStatuses(200),
  });
  if (wrong) {
    // Its right end is certctl refusing it: acme_order_ok judges that as it judges an issued order, and
    // the outcome is counted apart, by name.
    const outcome = state === 'invalid' ? 'refused' : state === 'valid' ? 'accepted' : 'undecided';
    acmeWrongAnswer.add(1, { outcome });
    acmeOrderOK.add(outcome === 'refused' ? 1 : 0, { wrong_answer: outcome });
    check(polled, { 'authz: invalid when the responder served a wrong key authorization': () => outcome === 'refused' });
    return { ok: outcome === 'refused', step: 'wrong_answer' };
  }
  if (state === 'valid') {
    acmeValidationMS.add(took);
    return null;
  }
  if (state === 'invalid') acmeChallengeInvalid.add(1);
  check(polled, { 'authz: valid once certctl validated the http-01 answer': () => false });
  return fail('validation', polled);
}

// fail records an order that stopped at step, with the status of that step's last answer (r).
function fail(step, r) {
  acmeOrderOK.add(0, { failed_at: step });
  acmeOrderFailed.add(1, { failed_at: step, status: String(r.status) });
  return { ok: false, step };
}

function sleepAsync(s) {
  return new Promise((resolve) => setTimeout(resolve, s * 1000));
}

// --- Revocation checks: OCSP and the CRL, as relying parties make them ---

// What setup() prepares: REVOCATION_CERTS certificates signed through the agent path, REVOKED of them
// revoked, so OCSP has a good, a revoked and an unknown serial to answer and the CRL lists the revoked.
const REVOCATION_CERTS = 8;
const REVOKED = 3;

export const REVOCATION_COUNTERS = Object.freeze({
  ocsp_get_ok: 'pki_ocsp_ok{endpoint:ocsp_get}',
  ocsp_post_ok: 'pki_ocsp_ok{endpoint:ocsp_post}',
  crl_ok: 'pki_crl_ok{endpoint:crl}',
  crl_304_ok: 'pki_crl_ok{endpoint:crl_304}',
  ocsp_500: pkiOCSP500,
  ocsp_post_leading_zero: pkiOCSPLeadingZero,
  ocsp_unverified: pkiOCSPUnverified,
  crl_missing_revoked: pkiCRLMissingRevoked,
});

export async function revocationProbe(cfg) {
  const info = await pkiProbe(cfg);
  if (!info) return info;
  const p = setupParams(cfg);
  const certs = [];
  for (let i = 0; i < REVOCATION_CERTS; i++) {
    const id = `lt-rev-${cfg.runId}-${i}`;
    const cn = `${id}.loadtest.example.com`;
    const v = issueAgentPath(cfg, info.agent_id, id, { cn, pem: await newCSRPem(cn) }, p);
    if (!v.ok) throw new Error(`certctl did not sign ${id} through the agent path: ${v.why}`);
    certs.push({ id, serial: v.serial });
  }
  const revoked = certs.slice(0, REVOKED);
  const r = http.post(`${cfg.baseUrl}/api/v1/certificates/bulk-revoke`, JSON.stringify({ reason: 'keyCompromise', certificate_ids: revoked.map((c) => c.id) }), p);
  const b = r.status === 200 ? json(r) : null;
  if (!b || b.total_revoked !== REVOKED) throw new Error(`revoking ${REVOKED} certificates answered HTTP ${r.status}: ${String(r.body).slice(0, 200)}`);
  // The first CRL request generates it (certctl caches it for a day): after the revocations, so it lists them.
  const crl = http.get(crlURL(cfg), { headers: untimedHeaders('setup'), timeout: '30s', tags: { phase: 'setup' } });
  if (crl.status !== 200) throw new Error(`the CRL of ${cfg.ids.issuer} answered HTTP ${crl.status}`);
  return Object.assign(info, {
    // How many of the serials asked about start with a zero digit: the ones certctl's OCSP POST misreads.
    serials_leading_zero: certs.filter((c) => /^0/.test(c.serial)).length,
    good: certs.slice(REVOKED).map((c) => c.serial),
    revoked: revoked.map((c) => c.serial),
    crl_etag: crl.headers['Etag'] || crl.headers['ETag'] || '',
  });
}

function crlURL(cfg) {
  return `${cfg.baseUrl}/.well-known/pki/crl/${cfg.ids.issuer}`;
}

function ocspURL(cfg) {
  return `${cfg.baseUrl}/.well-known/pki/ocsp/${cfg.ids.issuer}`;
}

// An unknown serial in certctl's stored form (40 hex digits); certctl never issued it.
function unknownSerial(n) {
  return ('7e57' + n.toString(16)).padEnd(40, '0');
}

const CHECKS = ['ocsp_get', 'ocsp_post', 'crl', 'crl_304'];
const STATUSES = ['good', 'revoked', 'unknown'];

// revocationCheck: iteration n makes one of the four requests in turn, OCSP asking about a good, a
// revoked and an unknown serial in turn.
export async function revocationCheck(cfg, data, n) {
  const kind = CHECKS[n % CHECKS.length];
  if (kind === 'crl' || kind === 'crl_304') return crlCheck(cfg, data, kind);
  const want = STATUSES[Math.floor(n / CHECKS.length) % STATUSES.length];
  const i = Math.floor(n / (CHECKS.length * STATUSES.length));
  const serial = want === 'good' ? data.good[i % data.good.length] : want === 'revoked' ? data.revoked[i % data.revoked.length] : unknownSerial(n);
  const tags = { endpoint: kind, name: kind === 'ocsp_get' ? 'GET /.well-known/pki/ocsp/{issuer}/{serial}' : 'POST /.well-known/pki/ocsp/{issuer}', ocsp_status: want };
  const r = kind === 'ocsp_get'
    ? http.get(`${ocspURL(cfg)}/${serial}`, { tags, responseType: 'binary', timeout: cfg.requestTimeout, responseCallback: http.expectedStatuses(200) })
    : http.post(ocspURL(cfg), (await ocspRequest(caDER(data), serial)).buffer, {
      headers: { 'Content-Type': 'application/ocsp-request' }, tags, responseType: 'binary', timeout: cfg.requestTimeout, responseCallback: http.expectedStatuses(200),
    });
  // certctl's defect, by its own words: a 500 of another making (a proxy's, a crash) is only a failure.
  if (r.status === 500 && /Failed to generate OCSP response/.test(String(r.body ? new TextDecoder().decode(new Uint8Array(r.body)) : ''))) {
    pkiOCSP500.add(1, { endpoint: kind });
  }
  let ok = false;
  let why = `HTTP ${r.status}`;
  if (r.status === 200 && contentType(r) === 'application/ocsp-response') {
    try {
      const p = parseOCSP(new Uint8Array(r.body));
      const one = p.responses.find((x) => x.serial === serial.replace(/^0+(?=.)/, ''));
      const signer = one ? await ocspVerified(p, caDER(data)) : '';
      if (one && !signer) pkiOCSPUnverified.add(1, { endpoint: kind });
      if (kind === 'ocsp_post' && want !== 'unknown' && /^0/.test(serial) && one && one.status === 'unknown' && signer) {
        // certctl's known defect (docs/certctl-findings.md#ocsp-post-leading-zero): counted apart, as
        // renewal-info's leading-zero 404 is, not judged as a wrong answer of the harness's making.
        pkiOCSPLeadingZero.add(1);
        return { ok: false, why: 'unknown for a serial starting with 0 (certctl defect)' };
      }
      ok = p.status === 'successful' && !!one && one.status === want && !!signer && saneTimes(one, Date.now());
      why = !one ? `${p.status}, no answer for the serial` : `${one.status}, signer ${signer || 'unverified'}`;
    } catch (e) {
      why = `unreadable: ${e.message}`;
    }
  }
  pkiOCSPOK.add(ok ? 1 : 0, { endpoint: kind });
  check(r, { [`${kind}: a signed OCSP answer, ${want} for a ${want} serial`]: () => ok }, { ocsp_status: want });
  return { ok, why };
}

async function crlCheck(cfg, data, kind) {
  const conditional = kind === 'crl_304';
  const headers = conditional ? { 'If-None-Match': data.crl_etag } : {};
  const r = http.get(crlURL(cfg), {
    headers, responseType: 'binary', timeout: cfg.requestTimeout,
    tags: { endpoint: kind, name: conditional ? 'GET /.well-known/pki/crl/{issuer} If-None-Match' : 'GET /.well-known/pki/crl/{issuer}' },
    responseCallback: http.expectedStatuses(conditional ? 304 : 200),
  });
  let ok = false;
  if (conditional) {
    ok = r.status === 304;
  } else if (r.status === 200 && contentType(r) === 'application/pkix-crl') {
    try {
      const crl = parseCRL(new Uint8Array(r.body));
      const missing = data.revoked.filter((s) => !crl.revoked.includes(s.replace(/^0+(?=.)/, '')));
      if (missing.length) pkiCRLMissingRevoked.add(missing.length);
      ok = missing.length === 0 && await crlVerified(crl, caDER(data)) && saneTimes(crl, Date.now());
    } catch (e) {
      ok = false;
    }
  }
  pkiCRLOK.add(ok ? 1 : 0, { endpoint: kind });
  check(r, { [conditional ? 'crl_304: 304 Not Modified for the current ETag' : 'crl: a CRL signed by the CA, listing every revoked serial']: () => ok });
  return { ok };
}
