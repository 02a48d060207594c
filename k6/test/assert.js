// A few assertions for testing k6/lib under k6 itself. Each is a k6 check and counts in `assertions`;
// lib.test.js holds a `checks: rate==1` threshold, so one failed assertion makes `k6 run` exit 99, and
// an `assertions` count threshold, so a test function that stopped early (an exception k6 logs and
// does not fail on: grafana/k6#6480) fails the run too.
import { check } from 'k6';
import { Counter } from 'k6/metrics';

export const assertions = new Counter('assertions');

// guarded runs one test function so that an exception in it is a failed check named after it, not a
// silent end of the iteration, and the functions after it still run.
export async function guarded(name, fn) {
  try {
    await fn();
  } catch (e) {
    console.error(`${name}: threw ${e && e.stack ? e.stack : e}`);
    assertions.add(1);
    check(null, { [`${name} ran to its end`]: () => false });
  }
}

export function eq(name, got, want) {
  const ok = JSON.stringify(got) === JSON.stringify(want);
  if (!ok) console.error(`${name}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  assertions.add(1);
  check(null, { [name]: () => ok });
}

export function truthy(name, v) {
  if (!v) console.error(`${name}: not true`);
  assertions.add(1);
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
  assertions.add(1);
  check(null, { [name]: () => ok });
}
