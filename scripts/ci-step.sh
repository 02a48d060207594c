#!/usr/bin/env bash
# ci-step.sh NAME COMMAND...: one step of CI. Runs COMMAND and exits with its code; when it passed and
# CI_COSTS names a file (.ci/run sets it to .ci/costs.tsv), rewrites NAME's line there with the wall time
# it took and the plan it ran against (CI_PLAN: the planned seconds TestCIPlan left for the steps it
# plans, earlier in the same CI). TestCIPlan (test/ciplan) plans CI from those lines.
set -uo pipefail
name=${1:?usage: ci-step.sh NAME COMMAND...}
shift
start=$(date +%s.%N)
"$@"
rc=$?
if [ "$rc" -eq 0 ] && [ -n "${CI_COSTS:-}" ] && [ -f "$CI_COSTS" ]; then
  took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  planned=-
  if [ -n "${CI_PLAN:-}" ] && [ -f "$CI_PLAN" ]; then
    planned=$(awk -F '\t' -v n="$name" '$1 == n { print $2 }' "$CI_PLAN")
    planned=${planned:--}
  fi
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  line=$(printf '%s\t%s\t%s\t%s\t%s' "$name" "$took" "$planned" "$(date -u +%Y-%m-%dT%H:%MZ)" "$commit")
  tmp=$(mktemp "$CI_COSTS.XXXXXX")
  awk -F '\t' -v n="$name" -v l="$line" '$1 == n { print l; done = 1; next } { print } END { if (!done) print l }' "$CI_COSTS" >"$tmp" && mv "$tmp" "$CI_COSTS"
  echo "ci-step: $name took ${took} s (recorded in $CI_COSTS)"
fi
exit "$rc"
