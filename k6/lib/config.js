// Every knob a scenario reads from the environment, in one place; docs/configuration.md lists them.
// Names stay outside the K6_ prefix: k6 takes K6_* variables as its own options.

const UNITS = { ms: 0.001, s: 1, m: 60, h: 3600 };

// durationSeconds('1m30s') -> 90. Same grammar k6 accepts for `duration`.
export function durationSeconds(text, name) {
  const s = String(text || '').trim();
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let m;
  let end = 0;
  while ((m = re.exec(s)) !== null) {
    total += parseFloat(m[1]) * UNITS[m[2]];
    end = re.lastIndex;
  }
  if (s === '' || end !== s.length || total <= 0) {
    throw new Error(`${name || 'DURATION'}="${text}" is not a duration: use a number with ms, s, m or h, e.g. 30s or 5m`);
  }
  return total;
}

function positiveInt(env, name, fallback) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[1-9]\d*$/.test(raw)) throw new Error(`${name}="${raw}" must be a positive whole number`);
  return parseInt(raw, 10);
}

export function loadConfig(env) {
  const duration = env.DURATION || '5m';
  if (env.REQUEST_TIMEOUT) durationSeconds(env.REQUEST_TIMEOUT, 'REQUEST_TIMEOUT');
  return Object.freeze({
    baseUrl: (env.CERTCTL_URL || 'https://localhost:8443').replace(/\/+$/, ''),
    token: env.CERTCTL_TOKEN || '',
    duration,
    durationSeconds: durationSeconds(duration),
    runId: (env.RUN_ID || 'manual').toLowerCase(),
    resultsDir: (env.RESULTS_DIR || 'results').replace(/\/+$/, ''),
    maxVUs: positiveInt(env, 'MAX_VUS', 0),
    preVUs: positiveInt(env, 'PRE_VUS', 0),
    // Shorter than the scenarios' gracefulStop, so a request to a server that died ends as a failed
    // request (counted) instead of an iteration cut off at the end (not counted).
    requestTimeout: env.REQUEST_TIMEOUT || '10s',
    ids: Object.freeze({
      team: env.LT_TEAM_ID || 'lt-team',
      owner: env.LT_OWNER_ID || 'lt-owner',
      policy: env.LT_POLICY_ID || 'lt-policy',
      issuer: env.LT_ISSUER_ID || 'lt-issuer-local',
      profile: env.LT_PROFILE_ID || 'lt-profile',
    }),
    // RATE_<SCENARIO> overrides a scenario's default rate, e.g. RATE_LIST_CERTIFICATES=20.
    rateFor(scenario, fallback) {
      return positiveInt(env, `RATE_${scenario.toUpperCase()}`, fallback);
    },
    // VUS_<SCENARIO> overrides a constant-vus scenario's VUs, e.g. VUS_ACME_BURST=50.
    vusFor(scenario, fallback) {
      return positiveInt(env, `VUS_${scenario.toUpperCase()}`, fallback);
    },
  });
}
