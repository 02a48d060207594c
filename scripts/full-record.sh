#!/usr/bin/env bash
# full-record.sh LOG: the full suite's record (test/e2e/testdata/full-suite.txt) from a passing, unfiltered
# `go test -v ./test/e2e/` log, as make test-full writes it: go test's result line of each test and
# subtest with its time, and how many breaches in it the machine check excused (the tests' "machine-excused:"
# lines, which logExcused in test/e2e writes: a tolerance the record must show, so a test that leans on it is seen), then
# the package's line. TestFullPlan prints it before the next make test-full.
set -euo pipefail
log=${1:?usage: full-record.sh LOG}
grep -qE '^ok\s' "$log" || { echo "full-record.sh: $log has no passing package line: the record is written only by a passing make test-full" >&2; exit 1; }
printf '# make test-full on %s, %s: passed\n' "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$(date -u +%Y-%m-%d)"
awk '
  /^=== (RUN|CONT|NAME|PAUSE)/ { cur = $3 }
  /machine-excused: / { excused[cur]++ }
  /^ *--- (PASS|FAIL|SKIP): Test/ { lines[++n] = $0; names[n] = $3 }
  /^(ok|FAIL)[ \t]/ { pkg = $0 }
  END {
    for (i = 1; i <= n; i++) {
      l = lines[i]
      if (excused[names[i]] > 0) l = l " machine-excused " excused[names[i]]
      print l
    }
    print pkg
  }' "$log"
