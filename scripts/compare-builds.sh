#!/usr/bin/env bash
# make compare-builds: the same load against two certctl builds, alternating old and new RUNS times in
# one sitting (so that the machine's drift falls on both alike), then loadtest compare on the two sets.
# OLD and NEW are certctl builds (CERTCTL_DIST directories) or images (CERTCTL_IMAGE references).
set -euo pipefail
: "${OLD:?set OLD to a certctl build directory (CERTCTL_DIST) or image, e.g. OLD=/opt/certctl/v2.1.7}"
: "${NEW:?set NEW to a certctl build directory (CERTCTL_DIST) or image}"
RUNS=${RUNS:-3}
[[ $RUNS =~ ^[1-9][0-9]?$ ]] || { echo "compare-builds: RUNS=$RUNS: a number of runs a side, 1-99" >&2; exit 2; }
export TIER=${TIER:-api,acme} DURATION=${DURATION:-2m}
base=${RUN_ID:-cmp-$(date -u +%m%d-%H%M%S)}
results=${RESULTS_DIR:-results}
loadtest=${LOADTEST:-bin/loadtest}

label() { local b=${1%/}; b=${b##*/}; echo "${b##*:}"; }
side() { # which side → the variable that selects its certctl
	if [ -d "$1" ]; then echo "CERTCTL_DIST=$1"; else echo "CERTCTL_IMAGE=$1"; fi
}
for b in "$OLD" "$NEW"; do
	if [[ $b == */* && ! -d $b && $b != *:* ]]; then echo "compare-builds: $b is neither a build directory nor an image reference" >&2; exit 2; fi
done
old_dirs=() new_dirs=()
echo "compare-builds: TIER=$TIER DURATION=$DURATION, $RUNS runs a side, alternating; $(label "$OLD") then $(label "$NEW")" >&2
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
		if [ $which = old ]; then old_dirs+=("$results/$id"); else new_dirs+=("$results/$id"); fi
	done
done
IFS=,
exec "$loadtest" compare --out "$results/$base" "$(label "$OLD")=${old_dirs[*]}" "$(label "$NEW")=${new_dirs[*]}"
