// Every knob a scenario reads from the environment, in one place; docs/configuration.md lists them.
// Names stay outside the K6_ prefix: k6 takes K6_* variables as its own options. Defaults come from
// the registry (internal/harness/knobs.go, rendered into knobs.js), never from a literal here.
import { DEFAULTS } from './knobs.js';

// knob(env, 'DURATION'): the variable when set and not empty, else its registry default. A family
// member (CONNECTOR_NGINX_URL) names its family (CONNECTOR_<TYPE>_URL) as `registryName`.
export function knob(env, name, registryName) {
  const v = env[name];
  if (v !== undefined && v !== '') return v;
  const key = registryName || name;
  if (!(key in DEFAULTS)) throw new Error(`${key} has no default for k6 in internal/harness/knobs.go`);
  return DEFAULTS[key];
}

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
  const duration = knob(env, 'DURATION');
  const requestTimeout = knob(env, 'REQUEST_TIMEOUT');
  durationSeconds(requestTimeout, 'REQUEST_TIMEOUT');
  return Object.freeze({
    baseUrl: knob(env, 'CERTCTL_URL').replace(/\/+$/, ''),
    token: env.CERTCTL_TOKEN || '', // generated per run: no default
    duration,
    durationSeconds: durationSeconds(duration),
    runId: knob(env, 'RUN_ID').toLowerCase(),
    resultsDir: knob(env, 'RESULTS_DIR').replace(/\/+$/, ''),
    maxVUs: positiveInt(env, 'MAX_VUS', 0),
    // ABORT_ON_FAIL: end the load once a threshold fails, judged from this far into it ('' = never).
    abortAfter: env.ABORT_ON_FAIL ? (durationSeconds(env.ABORT_ON_FAIL, 'ABORT_ON_FAIL'), env.ABORT_ON_FAIL) : '',
    preVUs: positiveInt(env, 'PRE_VUS', 0),
    // Shorter than the scenarios' gracefulStop, so a request to a server that died ends as a failed
    // request (counted) instead of an iteration cut off at the end (not counted).
    requestTimeout,
    ids: Object.freeze({
      team: knob(env, 'LT_TEAM_ID'),
      owner: knob(env, 'LT_OWNER_ID'),
      policy: knob(env, 'LT_POLICY_ID'),
      issuer: knob(env, 'LT_ISSUER_ID'),
      profile: knob(env, 'LT_PROFILE_ID'),
    }),
    // Set by the harness, not knobs: the free space where this run's results go and how many scenarios
    // share it (0 when unknown: no disk check).
    resultsFreeBytes: positiveInt(env, 'LT_RESULTS_FREE_BYTES', 0),
    runScenarios: positiveInt(env, 'LT_RUN_SCENARIOS', 1),
    // Which of a scenario's k6 processes this is, when the load is split (execution segments): names
    // its record and raw file. loadtest sets "2of4"; a k6-operator runner its pod name.
    segmentId: env.LT_SEGMENT ? String(env.LT_SEGMENT).replace(/[^0-9A-Za-z.-]+/g, '_') : '',
    // RATE_<SCENARIO> overrides a scenario's default rate, e.g. RATE_LIST_CERTIFICATES=20.
    rateFor(scenario, fallback) {
      return positiveInt(env, `RATE_${scenario.toUpperCase()}`, fallback);
    },
    // TIME_UNIT_<SCENARIO> is RATE_<SCENARIO>'s time unit: s (a second) or m (a minute); else the scenario's.
    unitFor(scenario, fallback) {
      const name = `TIME_UNIT_${scenario.toUpperCase()}`;
      const raw = env[name];
      if (raw === undefined || raw === '') return fallback;
      if (raw !== 's' && raw !== 'm') throw new Error(`${name}="${raw}": use s (a second) or m (a minute)`);
      return `1${raw}`;
    },
    // VUS_<SCENARIO> overrides a constant-vus scenario's VUs, e.g. VUS_ACME_BURST=50.
    vusFor(scenario, fallback) {
      return positiveInt(env, `VUS_${scenario.toUpperCase()}`, fallback);
    },
  });
}
