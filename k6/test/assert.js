// A few assertions for testing k6/lib under k6 itself. Each is a k6 check; lib.test.js holds a
// `checks: rate==1` threshold, so one failed assertion makes `k6 run` exit 99.
import { check } from 'k6';

export function eq(name, got, want) {
  const ok = JSON.stringify(got) === JSON.stringify(want);
  if (!ok) console.error(`${name}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  check(null, { [name]: () => ok });
}

export function truthy(name, v) {
  if (!v) console.error(`${name}: not true`);
  check(null, { [name]: () => !!v });
}

export function throws(name, fn, pattern) {
  let msg = null;
  try {
    fn();
  } catch (e) {
    msg = String(e && e.message ? e.message : e);
  }
  const ok = msg !== null && (!pattern || pattern.test(msg));
  if (!ok) console.error(`${name}: ${msg === null ? 'did not throw' : `threw "${msg}", want ${pattern}`}`);
  check(null, { [name]: () => ok });
}
