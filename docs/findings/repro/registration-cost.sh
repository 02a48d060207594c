#!/usr/bin/env bash
# Creating a target takes about 0.3 s of CPU (docs/certctl-findings.md#registration-cost).
# Shows: creating a target costs certctl a PBKDF2-SHA256 derivation of 600,000 rounds (the
#   target's configuration is encrypted with a fresh key each time), a third of a second of one
#   core; registering an agent does not (a random key, hashed once with SHA-256). The script times
#   three of each, and three team creations as the baseline of an ordinary write, and reports the
#   medians (curl's time_total, so network and TLS are included on every row).
# Reproduces when the median target creation takes ≥ 0.08 s more than the median agent
#   registration. On a busy or much faster machine the gap moves; the figures are printed.
# Creates in certctl: 3 teams, 3 agents and 3 NGINX targets (configuration only).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

teams='' agents='' targets=''
for _ in 1 2 3; do
	mk_team
	teams+="$HTTP_TIME"$'\n'
	mk_agent
	agent=$REPLY
	agents+="$HTTP_TIME"$'\n'
	uniq_name
	nginx_config "$REPLY"
	mk_target "$agent" NGINX "$REPLY"
	targets+="$HTTP_TIME"$'\n'
done
t_team=$(printf '%s' "$teams" | median)
t_agent=$(printf '%s' "$agents" | median)
t_target=$(printf '%s' "$targets" | median)
figures="median seconds per call: team $t_team, agent $t_agent, target $t_target (each of 3)"

if awk -v a="$t_agent" -v t="$t_target" 'BEGIN { exit !(t - a >= 0.08) }'; then
	reproduces "creating a target costs certctl a key derivation an agent registration does not: $figures"
fi
not_reproduced "target creation is not measurably dearer than agent registration: $figures"
