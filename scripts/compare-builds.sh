#!/usr/bin/env bash
# make compare-builds: the same load against two certctl builds, alternating old and new RUNS times in
# one sitting (so that the machine's drift falls on both alike), then loadtest compare on the two sets.
# OLD and NEW are certctl builds (CERTCTL_DIST directories) or images (CERTCTL_IMAGE references).
# TIER may name a tier whose scenarios each run on a stack of their own (deploy, pki, scale): each run
# is then one directory per scenario, all compared. KNEE=<scenario> adds a capacity search of that
# scenario per build (make capacity), old then new, and compares the knees.
set -euo pipefail
: "${OLD:?set OLD to a certctl build directory (CERTCTL_DIST) or image, e.g. OLD=/opt/certctl/v2.1.7}"
: "${NEW:?set NEW to a certctl build directory (CERTCTL_DIST) or image}"
RUNS=${RUNS:-3}
[[ $RUNS =~ ^[1-9][0-9]?$ ]] || { echo "compare-builds: RUNS=$RUNS: a number of runs a side, 1-99" >&2; exit 2; }
export TIER=${TIER:-api,acme} DURATION=${DURATION:-2m}
KNEE=${KNEE:-}
base=${RUN_ID:-cmp-$(date -u +%m%d-%H%M%S)}
results=${RESULTS_DIR:-results}
loadtest=${LOADTEST:-bin/loadtest}

label() { local b=${1%/}; b=${b##*/}; echo "${b##*:}"; }
side() { # which side → the variable that selects its certctl
	if [ -d "$1" ]; then echo "CERTCTL_DIST=$1"; else echo "CERTCTL_IMAGE=$1"; fi
}
seconds() { # a k6 duration (1m30s, 2m, 45s) in seconds
	local d=$1 s=0 n
	while [[ $d =~ ^([0-9]+)(h|m|s)(.*)$ ]]; do
		n=${BASH_REMATCH[1]}
		case ${BASH_REMATCH[2]} in h) s=$((s + n * 3600)) ;; m) s=$((s + n * 60)) ;; s) s=$((s + n)) ;; esac
		d=${BASH_REMATCH[3]}
	done
	[ -z "$d" ] || { echo "compare-builds: DURATION=$DURATION is not a k6 duration" >&2; exit 2; }
	echo "$s"
}
for b in "$OLD" "$NEW"; do
	if [[ $b == */* && ! -d $b && $b != *:* ]]; then echo "compare-builds: $b is neither a build directory nor an image reference" >&2; exit 2; fi
done
# The plan, checked as the runs will be (bad input stops here), and its wall time before anything starts:
# each run is its scenarios' stacks one after another (a tier of stacks per scenario) or one stack, each
# about 25 s to start and stop on 2 CPUs beside its load (measured 21-22 s a run and a capacity step of
# `make compare-builds KNEE=list_certificates`, images built, 2026-11-28), a deploy stack about 100 s
# (its agents' polls: test/e2e/gate_test.go's stackCost).
checked=$(env -u CERTCTL_DIST -u CERTCTL_IMAGE $(side "$OLD") "$loadtest" check) || exit $?
stacks=1
if [[ $checked == *"each on a fresh stack"* ]]; then
	stacks=$(awk '/^scenario /{on=1; next} on && NF == 0 {exit} on {n++} END {print n + 0}' <<<"$checked")
fi
stack_cost=25
overhead=$stack_cost
[[ ,$TIER, == *,deploy,* ]] && overhead=100
per_run=$(((stacks) * ($(seconds "$DURATION") + overhead)))
total=$((per_run * RUNS * 2))
plan="$RUNS runs a side, alternating, each about $((per_run / 60)) min ($stacks stack(s))"
if [ -n "$KNEE" ]; then
	step=$(seconds "${CAPACITY_STEP:-1m}")
	# A search ramps ×CAPACITY_FACTOR from its start up to 32× (6 steps at the defaults), then bisects to
	# CAPACITY_PRECISION (about 4 more); a breach is repeated. Twelve steps is a typical search (8 to 11
	# measured: docs/capacity.md, docs/comparing.md).
	total=$((total + 2 * 12 * (step + stack_cost)))
	plan="$plan; then a capacity search of $KNEE per build, typically 12 steps of about $(((step + stack_cost + 30) / 60)) min each"
fi
echo "compare-builds: TIER=$TIER DURATION=$DURATION, $plan: about $((total / 60)) minutes in all; $(label "$OLD") then $(label "$NEW")" >&2
old_dirs=() new_dirs=()
for i in $(seq 1 "$RUNS"); do
	for which in old new; do
		build=$OLD; [ $which = new ] && build=$NEW
		id="$base-$which-$i"
		code=0
		env -u CERTCTL_DIST -u CERTCTL_IMAGE RUN_ID="$id" LOADTEST_GOAL=compare-builds $(side "$build") "$loadtest" run || code=$?
		# A breached budget is a figure to compare; a run without results is not.
		if [ "$code" != 0 ] && [ "$code" != 99 ]; then
			echo "compare-builds: run $id exited $code: no comparison (its results: $results/$id)" >&2
			exit "$code"
		fi
		# A tier of a stack per scenario leaves one directory per scenario: <id>-<scenario>.
		dirs=("$results/$id")
		if [ ! -e "$results/$id/summary.json" ]; then
			dirs=()
			for d in "$results/$id"-*/; do [ -e "$d/summary.json" ] && dirs+=("${d%/}"); done
			[ ${#dirs[@]} -gt 0 ] || { echo "compare-builds: run $id left no summary.json" >&2; exit 4; }
		fi
		if [ $which = old ]; then old_dirs+=("${dirs[@]}"); else new_dirs+=("${dirs[@]}"); fi
	done
done
code=0
(IFS=,; "$loadtest" compare --out "$results/$base" "$(label "$OLD")=${old_dirs[*]}" "$(label "$NEW")=${new_dirs[*]}") || code=$?
if [ -n "$KNEE" ]; then
	for which in old new; do
		build=$OLD; [ $which = new ] && build=$NEW
		env -u CERTCTL_DIST -u CERTCTL_IMAGE RUN_ID="$base-knee-$which" SCENARIO="$KNEE" LOADTEST_GOAL=compare-builds $(side "$build") "$loadtest" capacity ||
			{ echo "compare-builds: the capacity search of $KNEE on $(label "$build") failed: see $results/$base-knee-$which" >&2; exit 3; }
	done
	kcode=0
	"$loadtest" compare --out "$results/$base/knee" "$(label "$OLD")=$results/$base-knee-old" "$(label "$NEW")=$results/$base-knee-new" || kcode=$?
	[ "$kcode" -le 1 ] || exit "$kcode"
	[ "$code" != 0 ] || code=$kcode
fi
exit "$code"
