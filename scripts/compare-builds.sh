#!/usr/bin/env bash
# make compare-builds: the same load against two certctl builds, alternating OLD (the reference) and NEW
# (the candidate) RUNS times a side in one sitting (A B B A ..., so that the machine's drift falls on both
# alike), each run on a fresh stack, then one verdict: `loadtest compare-builds` (loadtest help gate).
# OLD and NEW are certctl builds (CERTCTL_DIST directories) or images (CERTCTL_IMAGE references).
# KNEE=<scenario> adds a capacity search of that scenario per build (make capacity), old then new, and
# compares the knees.
set -euo pipefail
: "${OLD:?set OLD to a certctl build directory (CERTCTL_DIST) or image, e.g. OLD=/opt/certctl/v2.1.7}"
: "${NEW:?set NEW to a certctl build directory (CERTCTL_DIST) or image}"
RUNS=${RUNS:-3}
[[ $RUNS =~ ^[1-9][0-9]?$ ]] || { echo "compare-builds: RUNS=$RUNS: a number of runs a side, 1-20" >&2; exit 2; }
KNEE=${KNEE:-}
export RUN_ID=${RUN_ID:-cmp-$(date -u +%m%d-%H%M%S)}
base=$RUN_ID
results=${RESULTS_DIR:-results}
loadtest=${LOADTEST:-bin/loadtest}
label() { local b=${1%/}; b=${b##*/}; echo "${b##*:}"; }
# Each side's certctl is the command's to set: neither is inherited by the other's runs.
gate=(env -u CERTCTL_DIST -u CERTCTL_IMAGE LOADTEST_GOAL=compare-builds "$loadtest" compare-builds --runs "$RUNS" --reference "$OLD" --candidate "$NEW")
# The plan and its wall time before anything starts; bad input stops here.
"${gate[@]}" --plan >/dev/null
if [ -n "$KNEE" ]; then
	# A search ramps ×CAPACITY_FACTOR from its start up to 32× (6 steps at the defaults), then bisects to
	# CAPACITY_PRECISION (about 4 more); a breach is repeated. Twelve steps is a typical search (8 to 11
	# measured: docs/capacity.md, docs/comparing.md), each a stack of about 25 s beside its step.
	echo "compare-builds: then a capacity search of $KNEE per build, typically 12 steps of CAPACITY_STEP (${CAPACITY_STEP:-1m}) and about 25 s of stack each" >&2
fi
code=0
"${gate[@]}" || code=$?
# A gate that gave no answer (a run without results, bad input) stops here; a verdict goes on to the knees.
case $code in 0 | 1 | 6 | 99) ;; *) exit "$code" ;; esac
if [ -n "$KNEE" ]; then
	for which in old new; do
		build=$OLD; [ $which = new ] && build=$NEW
		side=CERTCTL_IMAGE=$build; [ -d "$build" ] && side=CERTCTL_DIST=$build
		env -u CERTCTL_DIST -u CERTCTL_IMAGE RUN_ID="$base-knee-$which" SCENARIO="$KNEE" LOADTEST_GOAL=compare-builds "$side" "$loadtest" capacity ||
			{ echo "compare-builds: the capacity search of $KNEE on $(label "$build") failed: see $results/$base-knee-$which" >&2; exit 3; }
	done
	kcode=0
	"$loadtest" compare --out "$results/$base/knee" "$(label "$OLD")=$results/$base-knee-old" "$(label "$NEW")=$results/$base-knee-new" || kcode=$?
	[ "$kcode" -le 1 ] || exit "$kcode"
	[ "$code" != 0 ] || code=$kcode
fi
exit "$code"
