#!/usr/bin/env bash
# Prints a Markdown summary of one load-test run, for $GITHUB_STEP_SUMMARY (CI) or a terminal:
#
#   scripts/step-summary.sh <run-dir> [exit-code]
#
# <run-dir> is results/<run-id> (results/latest works too). The exit code is read from the run's
# summary.json; [exit-code], what `bin/loadtest run` returned, only stands in when there is none (the
# run stopped before writing it), so a missing or empty directory still gets a verdict.
# It always exits 0: a summary that cannot be written must not hide the run's own result.
set -uo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 <run-dir> [exit-code]" >&2
  exit 2
fi
dir=$1
[ "$dir" = / ] || dir=${dir%/}
arg_code=${2:-}

meaning() { # exit code -> what it means (README.md, "Exit codes")
  case $1 in
    0) echo "every threshold held and every k6 process exited 0" ;;
    99) echo "thresholds were breached" ;;
    2) echo "bad input: unknown tier or target, malformed duration or rate" ;;
    3) echo "the environment was wrong: no Docker engine, a missing image, or the stack did not come up" ;;
    4) echo "k6 wrote no results" ;;
    107) echo "a scenario's script failed (k6 107)" ;;
    108) echo "a scenario's setup() probe aborted: certctl unreachable or the token rejected (k6 108)" ;;
    130) echo "the run was interrupted" ;;
    "") echo "no code was recorded: the run never started (an earlier step failed) or did not finish (timed out, cancelled)" ;;
    *) echo "unexpected code; see the run step's log" ;;
  esac
}

# A fence longer than any run of backticks in the text, so that the text cannot close it.
fence_for() {
  local longest
  longest=$(grep -o '`\+' "$1" 2>/dev/null | awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }')
  if [ "$longest" -lt 3 ]; then longest=2; fi
  printf '%*s' "$((longest + 1))" '' | tr ' ' '`'
}

code=
if [ -f "$dir/summary.json" ]; then
  if command -v jq >/dev/null 2>&1; then
    code=$(jq -r '.exit_code // empty' "$dir/summary.json" 2>/dev/null)
  else # the writer indents by two spaces: the top-level key is the only one at that depth
    code=$(sed -n 's/^  "exit_code": \([0-9]\{1,\}\),\{0,1\}$/\1/p' "$dir/summary.json" | head -n 1)
  fi
fi
code=${code:-$arg_code}

if [ -n "$code" ] && [ "$code" = 0 ]; then verdict=PASSED; else verdict=FAILED; fi
echo "## certctl load test: $verdict (exit ${code:-unknown})"
echo

if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "No results: ${dir:+\`$dir\` does not exist; }the run stopped before it created its directory (bad input,"
  echo "no Docker engine, a missing image), so there is no artifact either. The run step's log says why."
  echo
  echo "**Exit ${code:-unknown}**: $(meaning "$code")."
  exit 0
fi

if [ -s "$dir/summary.txt" ]; then
  echo "**$(head -n 1 "$dir/summary.txt")**"
else
  echo "**No summary.txt in \`$dir\`**: the run ended before its summary was written (the step timed out or was"
  echo "cancelled, or the summary writer failed). Whatever the run did save is in the artifact."
fi
echo
echo "**Exit ${code:-unknown}**: $(meaning "$code")."
if [ -n "$arg_code" ] && [ -n "$code" ] && [ "$arg_code" != "$code" ]; then
  echo "(\`bin/loadtest run\` itself exited $arg_code.)"
fi
echo

if [ -s "$dir/summary.txt" ]; then
  f=$(fence_for "$dir/summary.txt")
  echo "${f}text"
  cat "$dir/summary.txt"
  # summary.txt ends with a newline; make sure the fence starts a line even if it does not.
  [ -z "$(tail -c 1 "$dir/summary.txt")" ] || echo
  echo "$f"
  echo
fi

files=$(cd "$dir" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
if [ -n "$files" ]; then
  echo "<details><summary>Files of run $(basename "$(cd "$dir" && pwd -P)") (in the artifact)</summary>"
  echo
  while IFS= read -r p; do echo "- \`$p\`"; done <<<"$files"
  echo
  echo "</details>"
else
  echo "The run directory is empty."
fi
exit 0
