// Journeys of the auth tier: certctl's OIDC login through a real Keycloak (the profile auth), sessions
// used on the API, logout and back-channel logout. What certctl needs to get there, and what it does
// wrong on the way, is in docs/auth.md and docs/certctl-findings.md (#auth-routes-behind-auth, …).
//
// Every login is a fresh browser: its own cookie jar, one User-Agent for the login and the callback
// (certctl binds the pre-login row to the client's address and User-Agent by default).
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { untimedHeaders, json } from './certctl.js';
import { probeCertctl } from './probe.js';
import {
  oidcLoginMS, oidcInitiateMS, oidcProviderMS, oidcCallbackMS, oidcLoginOK, oidcLoginFailed,
  sessionRevokedAccepted, sessionRevokedRefused, logoutEffectiveMS, oidcInitiate401, oidcInitiate500, sessionAddedMS,
  backchannelSessionKept,
} from './metrics.js';

export const SESSION_COOKIE = '__Host-certctl_session';
export const CSRF_COOKIE = '__Host-certctl_csrf';
const PROVIDER_NAME = 'loadtest-keycloak';
const GROUP = 'certctl-loadtest';

// authConfig(env): the provider's side of the tier, from the knobs loadtest passes.
export function authConfig(env) {
  // Where compose serves the provider (KC_HOSTNAME) and the realm fixtures/auth/realm-loadtest.json makes.
  const keycloak = 'https://keycloak:8443';
  const realm = 'loadtest';
  return Object.freeze({
    keycloak,
    realm,
    issuer: `${keycloak}/realms/${realm}`,
    users: Math.max(1, parseInt(env.AUTH_USERS || '20', 10) || 20),
    clientSecret: env.AUTH_CLIENT_SECRET || '',
    adminSecret: env.AUTH_ADMIN_SECRET || '',
    // The routing defect's workaround (docs/certctl-findings.md#auth-routes-behind-auth): certctl's API-only
    // server puts /auth/* behind its own API authentication, so the login and the callback carry the
    // harness's API key as well. Off: they go as a browser sends them, and every login fails.
    bearerOnAuthRoutes: env.AUTH_WORKAROUNDS === '1',
    // Whether Keycloak's logout tokens name the session (compose's realm import): the record says so.
    bclSid: env.AUTH_BCL_SID === 'true',
  });
}

export function userName(i) {
  return `lt-user-${i}`;
}

function password(a, i) {
  // Not a secret: the realm lives as long as the stack, on an internal network.
  return `lt-${a.realm}-${i}-password`;
}

function setupParams(extra) {
  return Object.assign({ headers: untimedHeaders('setup', extra && extra.headers), tags: { phase: 'setup' }, timeout: '30s' },
    extra && extra.jar ? { jar: extra.jar } : {});
}

// adminToken(a): a token of the realm's loadtest-admin service account (users, keys, sessions).
export function adminToken(a) {
  const res = http.post(`${a.issuer}/protocol/openid-connect/token`,
    { grant_type: 'client_credentials', client_id: 'loadtest-admin', client_secret: a.adminSecret },
    setupParams());
  const body = json(res);
  if (res.status !== 200 || !body || !body.access_token) {
    throw new Error(`Keycloak refused the harness's admin client (${res.status} on ${a.issuer}/protocol/openid-connect/token): is the realm imported?`);
  }
  return body.access_token;
}

function adminParams(token, extraHeaders) {
  return setupParams({ headers: Object.assign({ Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, extraHeaders || {}) });
}

// ensureUsers(a, token, n): the realm's lt-user-0 … lt-user-(n-1), in the group certctl maps to a role,
// created once (a 409 says it exists). Returns their Keycloak ids, by index.
export function ensureUsers(a, token, n) {
  const base = `${a.keycloak}/admin/realms/${a.realm}`;
  const ids = [];
  for (let i = 0; i < n; i++) {
    const u = userName(i);
    const res = http.post(`${base}/users`, JSON.stringify({
      username: u, enabled: true, email: `${u}@loadtest.example.com`, emailVerified: true,
      firstName: 'Load', lastName: `Test ${i}`, groups: [`/${GROUP}`],
      credentials: [{ type: 'password', value: password(a, i), temporary: false }],
    }), adminParams(token));
    if (res.status !== 201 && res.status !== 409) {
      throw new Error(`Keycloak did not create user ${u}: ${res.status} ${String(res.body).slice(0, 200)}`);
    }
    const found = json(http.get(`${base}/users?exact=true&username=${u}`, adminParams(token)));
    if (!found || !found.length) throw new Error(`Keycloak does not list user ${u} it just created`);
    ids.push(found[0].id);
  }
  return ids;
}

// ensureProvider(cfg, a): certctl's provider for the realm and the mapping of the realm's group to
// r-operator, created through certctl's API once per stack. Returns the provider's id.
export function ensureProvider(cfg, a) {
  const api = `${cfg.baseUrl}/api/v1/auth/oidc`;
  const h = { headers: { Authorization: `Bearer ${cfg.token}`, 'Content-Type': 'application/json' } };
  const listed = json(http.get(`${api}/providers`, setupParams(h)));
  const rows = listed && (listed.data || listed.providers || listed);
  let p = Array.isArray(rows) ? rows.find((r) => r.name === PROVIDER_NAME) : null;
  if (!p) {
    const res = http.post(`${api}/providers`, JSON.stringify({
      name: PROVIDER_NAME,
      issuer_url: a.issuer,
      client_id: 'certctl',
      client_secret: a.clientSecret,
      redirect_uri: `${cfg.baseUrl}/auth/oidc/callback`,
      groups_claim_path: 'groups',
      groups_claim_format: 'string-array',
      scopes: ['openid', 'profile', 'email'],
      // Left out (as in certctl's own Keycloak runbook), certctl stores NULL in a NOT NULL column and
      // answers 500 "could not create provider" (docs/certctl-findings.md#oidc-provider-null-domains).
      allowed_email_domains: [],
    }), setupParams(h));
    p = json(res);
    if (res.status !== 201 || !p || !p.id) {
      throw new Error(`certctl did not create the OIDC provider: ${res.status} ${String(res.body).slice(0, 200)}`);
    }
    const m = http.post(`${api}/group-mappings`, JSON.stringify({ provider_id: p.id, group_name: GROUP, role_id: 'r-operator' }), setupParams(h));
    if (m.status !== 201 && m.status !== 200) {
      throw new Error(`certctl did not map group ${GROUP} to r-operator: ${m.status} ${String(m.body).slice(0, 200)}`);
    }
  }
  return p.id;
}

// refreshProvider(cfg, id): certctl drops its cached discovery and keys of the provider (the next login
// fetches both again): the cold condition certctl's own cold-cache benchmark repeats.
export function refreshProvider(cfg, id) {
  return http.post(`${cfg.baseUrl}/api/v1/auth/oidc/providers/${id}/refresh`, null,
    setupParams({ headers: { Authorization: `Bearer ${cfg.token}` } }));
}

function cookieOf(jar, url, name) {
  const c = jar.cookiesForURL(url)[name];
  return c && c.length ? c[0] : '';
}

function location(res) {
  return res.headers.Location || res.headers.location || '';
}

// login(cfg, a, providerId, i): user i through the whole flow. Returns { ok, session, csrf, reason }.
// Each leg has its own metric: certctl's redirect (initiate), the provider's form and its answer
// (provider), certctl's callback (the token exchange, the ID token's checks, the user and the session).
export function login(cfg, a, providerId, i, tags) {
  const jar = new http.CookieJar();
  const ua = `certctl-loadtest/${cfg.runId}/${exec.vu.idInTest}`;
  const certctlHeaders = Object.assign({ 'User-Agent': ua },
    a.bearerOnAuthRoutes ? { Authorization: `Bearer ${cfg.token}` } : {});
  const t = Object.assign({}, tags || {});
  const fail = (reason) => {
    oidcLoginOK.add(0, t);
    oidcLoginFailed.add(1, Object.assign({ reason }, t));
    return { ok: false, reason };
  };
  const started = Date.now();

  const init = http.get(`${cfg.baseUrl}/auth/oidc/login?provider=${providerId}`, {
    jar, redirects: 0, headers: certctlHeaders, timeout: cfg.requestTimeout,
    tags: Object.assign({ name: 'GET /auth/oidc/login' }, t), responseCallback: http.expectedStatuses(302),
  });
  oidcInitiateMS.add(init.timings.duration, t);
  const authorize = location(init);
  if (init.status === 401) oidcInitiate401.add(1, t);
  if (init.status === 500) oidcInitiate500.add(1, t);
  if (init.status !== 302 || !authorize.startsWith(a.keycloak)) {
    return fail(init.status === 302 ? 'not_to_provider' : `initiate_${init.status}`);
  }

  const providerParams = (name) => ({
    jar, redirects: 0, headers: { 'User-Agent': ua }, timeout: cfg.requestTimeout,
    tags: Object.assign({ name }, t),
  });
  const form = http.get(authorize, Object.assign(providerParams('GET keycloak authorize'), { responseCallback: http.expectedStatuses(200) }));
  const action = form.status === 200 ? form.html().find('form#kc-form-login').attr('action') : '';
  if (!action) return fail(`provider_form_${form.status}`);
  const answer = http.post(action, { username: userName(i), password: password(a, i), credentialId: '' },
    Object.assign(providerParams('POST keycloak login'), { responseCallback: http.expectedStatuses(302) }));
  oidcProviderMS.add(form.timings.duration + answer.timings.duration, t);
  const callback = location(answer);
  if (answer.status !== 302 || !callback.startsWith(`${cfg.baseUrl}/auth/oidc/callback`)) {
    return fail(`provider_login_${answer.status}`);
  }

  const cb = http.get(callback, {
    jar, redirects: 0, headers: certctlHeaders, timeout: cfg.requestTimeout,
    tags: Object.assign({ name: 'GET /auth/oidc/callback' }, t), responseCallback: http.expectedStatuses(302),
  });
  oidcCallbackMS.add(cb.timings.duration, t);
  const session = cookieOf(jar, cfg.baseUrl, SESSION_COOKIE);
  const csrf = cookieOf(jar, cfg.baseUrl, CSRF_COOKIE);
  const landed = location(cb);
  const ok = check(cb, {
    'oidc callback: 302 to the dashboard': (r) => r.status === 302 && !/error=/.test(landed),
    'oidc callback: session and CSRF cookies set': () => !!session && !!csrf,
  });
  if (!ok) {
    const m = /reason=([a-z_]+)/.exec(landed);
    return fail(m ? `callback_${m[1]}` : `callback_${cb.status}`);
  }
  oidcLoginMS.add(Date.now() - started, t);
  oidcLoginOK.add(1, t);
  return { ok: true, session, csrf };
}

// sessionHeaders(s, write): the headers a browser sends with session s; a write carries the CSRF token.
export function sessionHeaders(s, write) {
  const h = { Cookie: `${SESSION_COOKIE}=${s.session}; ${CSRF_COOKIE}=${s.csrf}`, 'Content-Type': 'application/json' };
  if (write) h['X-CSRF-Token'] = s.csrf;
  return h;
}

// whoAmI(cfg, headers, auth, tags): GET /api/v1/auth/check, the cheapest authenticated call (no
// permission lookup), by session or by key.
function whoAmI(cfg, headers, auth, tags) {
  return http.get(`${cfg.baseUrl}/api/v1/auth/check`, {
    headers, timeout: cfg.requestTimeout,
    tags: Object.assign({ name: 'GET /api/v1/auth/check', endpoint: 'check', auth }, tags || {}), responseCallback: http.expectedStatuses(200),
  });
}

// sessionAdded(cfg, s, tags): the who-am-I by API key, then by session s; what the session added
// (session_added_ms) when both answered. Returns the session's answer.
export function sessionAdded(cfg, s, tags) {
  const key = whoAmI(cfg, { Authorization: `Bearer ${cfg.token}` }, 'key', tags);
  const mine = whoAmI(cfg, sessionHeaders(s, false), 'session', tags);
  if (key.status === 200 && mine.status === 200) sessionAddedMS.add(mine.timings.duration - key.timings.duration, tags || {});
  check(mine, { 'session: who-am-I 200': (r) => r.status === 200 });
  return mine;
}

// authProbe(cfg, a): certctl up and the token an admin's (probeCertctl), the realm's users, certctl's
// provider for it. Returns { providerId, userIds }.
export function authProbe(cfg, a) {
  const base = probeCertctl(cfg);
  if (!base) return base;
  const token = adminToken(a);
  const userIds = ensureUsers(a, token, a.users);
  const providerId = ensureProvider(cfg, a);
  // What a browser's login start gets, whatever the workarounds: the record's evidence of the routing
  // defect (401 or the dashboard's page instead of 302) and of the disabled provider (500).
  const bare = http.get(`${cfg.baseUrl}/auth/oidc/login?provider=${providerId}`, Object.assign(setupParams({ jar: new http.CookieJar() }), {
    redirects: 0, responseCallback: http.expectedStatuses({ min: 200, max: 599 }), // a refusal is the evidence, not a failure
  }));
  const cost = sessionCost(cfg, a, providerId);
  return Object.assign({}, base, {
    providerId, userIds, workarounds: a.bearerOnAuthRoutes, bcl_sid: a.bclSid,
    browser_login_start: `${bare.status} ${String(bare.headers['Content-Type'] || '').split(';')[0]}`.trim(),
  }, cost === null ? {} : { session_cost_ms: cost });
}

// sessionCost(cfg, a, providerId): what a session's who-am-I costs certctl over the API key's, on the
// idle server before the load: the median of five pairs, one after the other, ms. The signature of
// docs/certctl-findings.md#session-pbkdf2-per-request (a fixed cost on every session call), measured
// apart from every budget it explains; null when no login gets a session (the routing defect).
function sessionCost(cfg, a, providerId) {
  const s = login(cfg, a, providerId, 0, { phase: 'setup' });
  if (!s.ok) return null;
  const tags = { phase: 'setup' };
  const diffs = [];
  for (let i = 0; i < 5; i++) {
    const key = whoAmI(cfg, untimedHeaders('setup', { Authorization: `Bearer ${cfg.token}` }), 'key', tags);
    const mine = whoAmI(cfg, untimedHeaders('setup', sessionHeaders(s, false)), 'session', tags);
    if (key.status === 200 && mine.status === 200) diffs.push(mine.timings.duration - key.timings.duration);
  }
  if (!diffs.length) return null;
  diffs.sort((x, y) => x - y);
  return Math.round(diffs[Math.floor(diffs.length / 2)] * 10) / 10;
}

// sessionProbe(cfg, a): authProbe, then every user logged in once: the sessions the VUs share. A run
// where no login succeeds has nothing to compare and stops here, saying why.
export function sessionProbe(cfg, a) {
  const data = authProbe(cfg, a);
  if (!data) return data;
  const sessions = [];
  let last = '';
  for (let i = 0; i < a.users; i++) {
    const s = login(cfg, a, data.providerId, i, { phase: 'setup' });
    if (s.ok) sessions.push({ session: s.session, csrf: s.csrf });
    else last = s.reason;
  }
  if (!sessions.length) {
    return exec.test.abort(`no OIDC login succeeded (last: ${last}): the session path cannot be measured; docs/auth.md says which certctl defects stop a login and AUTH_WORKAROUNDS=1 works around them`);
  }
  return Object.assign(data, { sessions });
}

function apiParams(cfg, headers, endpoint, auth, expected) {
  return {
    headers, timeout: cfg.requestTimeout,
    tags: { name: endpoint === 'list' ? 'GET /api/v1/certificates' : 'POST /api/v1/certificates', endpoint, auth },
    responseCallback: http.expectedStatuses(...expected),
  };
}

// sessionAPICalls(cfg, s): the who-am-I, the listing and a creation, each by session s and by the API key.
export function sessionAPICalls(cfg, s) {
  const key = { Authorization: `Bearer ${cfg.token}`, 'Content-Type': 'application/json' };
  const name = `lt-${cfg.runId}-${exec.scenario.iterationInTest}`;
  const body = (way) => JSON.stringify({
    name: `${name}-${way}`, common_name: `${name}-${way}.loadtest.example.com`, issuer_id: cfg.ids.issuer, owner_id: cfg.ids.owner,
    team_id: cfg.ids.team, renewal_policy_id: cfg.ids.policy, environment: 'loadtest', tags: { harness: 'certctl-loadtest', run: cfg.runId },
  });
  let mine = null;
  for (const [auth, h, write] of [['session', sessionHeaders(s, false), sessionHeaders(s, true)], ['key', key, key]]) {
    const p = (endpoint, headers, expected) => apiParams(cfg, headers, endpoint, auth, expected);
    const who = whoAmI(cfg, h, auth);
    if (auth === 'session') mine = who;
    else if (who.status === 200 && mine && mine.status === 200) sessionAddedMS.add(mine.timings.duration - who.timings.duration);
    const list = http.get(`${cfg.baseUrl}/api/v1/certificates?per_page=20&page=1`, p('list', h, [200]));
    const made = http.post(`${cfg.baseUrl}/api/v1/certificates`, body(auth), p('create', write, [201]));
    check(null, {
      [`${auth}: who-am-I 200`]: () => who.status === 200,
      [`${auth}: list 200`]: () => list.status === 200,
      [`${auth}: create 201`]: () => made.status === 201,
    });
  }
}

// The harness's admin token, per VU, renewed a minute before the realm's 5-minute lifetime ends.
let admin = { token: '', until: 0 };
function vuAdminToken(a) {
  if (Date.now() > admin.until) admin = { token: adminToken(a), until: Date.now() + 240000 };
  return admin.token;
}

// rotateKey(a): Keycloak signs with a new RSA key from now on (a generated key of a higher priority than
// every other); the keys this rotation left behind but one are deleted, so the JWKS keeps two keys.
function rotateKey(a) {
  // A fresh token each time: the realm signs it, and a token signed by a key this rotation deletes is refused.
  const token = adminToken(a);
  const base = `${a.keycloak}/admin/realms/${a.realm}`;
  const realm = json(http.get(base, adminParams(token)));
  if (!realm || !realm.id) throw new Error('Keycloak does not describe the realm');
  const res = http.post(`${base}/components`, JSON.stringify({
    name: `lt-rsa-${Date.now()}`, providerId: 'rsa-generated', providerType: 'org.keycloak.keys.KeyProvider', parentId: realm.id,
    config: { priority: [String(Date.now())], enabled: ['true'], active: ['true'], algorithm: ['RS256'], keySize: ['2048'] },
  }), adminParams(token));
  if (res.status !== 201) throw new Error(`Keycloak did not add a signing key: ${res.status}`);
  const keys = json(http.get(`${base}/components?type=org.keycloak.keys.KeyProvider`, adminParams(token))) || [];
  const ours = keys.filter((k) => /^lt-rsa-\d+$/.test(k.name)).sort((x, y) => Number(y.name.slice(7)) - Number(x.name.slice(7)));
  for (const old of ours.slice(2)) http.del(`${base}/components/${old.id}`, null, adminParams(token));
}

// coldLogin(cfg, a, data, cold, i): the cold condition (refresh or rotation), then user i's login.
export function coldLogin(cfg, a, data, cold, i) {
  if (cold === 'refresh') {
    const r = refreshProvider(cfg, data.providerId);
    if (r.status !== 200 && r.status !== 204) throw new Error(`certctl did not refresh the provider: ${r.status}`);
  } else {
    rotateKey(a);
  }
  return login(cfg, a, data.providerId, i, { cold });
}

// A session's call after its end: certctl must refuse it (401). Polled for up to 5 s, as a back-channel
// logout may reach certctl after Keycloak's admin call returns; a session still accepted then is counted.
function refusedAfter(cfg, s, way, ended) {
  const deadline = ended + 5000;
  for (;;) {
    const r = http.get(`${cfg.baseUrl}/api/v1/auth/check`, {
      headers: sessionHeaders(s, false), timeout: cfg.requestTimeout,
      tags: { name: 'GET /api/v1/auth/check', endpoint: 'check_after_end', way }, responseCallback: http.expectedStatuses(200, 401),
    });
    if (r.status === 401) {
      logoutEffectiveMS.add(Date.now() - ended, { way });
      sessionRevokedRefused.add(1, { way });
      return true;
    }
    if (Date.now() > deadline) {
      sessionRevokedAccepted.add(1, { way });
      if (way === 'backchannel') backchannelSessionKept.add(1);
      sessionRevokedRefused.add(0, { way });
      return false;
    }
    http.get(`${cfg.baseUrl}/health`, { tags: { phase: 'followup' } }); // a pause that is not a sleep
  }
}

// loginAndLogout(cfg, a, data, way, i): user i logs in, calls, ends the session one way, and calls again.
export function loginAndLogout(cfg, a, data, way, i) {
  const s = login(cfg, a, data.providerId, i, { way });
  if (!s.ok) return;
  sessionAdded(cfg, s, { way });
  let ended;
  if (way === 'logout') {
    const out = http.post(`${cfg.baseUrl}/auth/logout`, null, {
      headers: sessionHeaders(s, true), timeout: cfg.requestTimeout,
      tags: { name: 'POST /auth/logout', way }, responseCallback: http.expectedStatuses(204),
    });
    check(out, { 'logout: 204': (r) => r.status === 204 });
    ended = Date.now();
  } else {
    const token = vuAdminToken(a);
    const out = http.post(`${a.keycloak}/admin/realms/${a.realm}/users/${data.userIds[i]}/logout`, null,
      Object.assign(adminParams(token), { tags: { name: 'POST keycloak user logout', way } }));
    check(out, { 'provider logout: 204': (r) => r.status === 204 });
    ended = Date.now();
  }
  refusedAfter(cfg, s, way, ended);
}
