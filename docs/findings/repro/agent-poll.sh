#!/usr/bin/env bash
# The agent's fixed 30 s poll (docs/certctl-findings.md#agent-poll).
# Shows: how often the certctl agents talking to this server ask for work and heartbeat, read
#   from certctl's own audit trail (every API call leaves an event with its path:
#   docs/certctl-findings.md#audit-every-call) over the last 200 s: a work poll every ~30 s and a
#   heartbeat every ~60 s (±10 % jitter on main-151107c). That the intervals are compiled in,
#   with no setting, is read in the source (cmd/agent/main.go: heartbeatInterval 60 s,
#   pollInterval 30 s) and cannot be seen over HTTP.
# Needs a certctl agent running against this server for the last ~2 minutes; without one it exits
#   2 (start cmd/agent with CERTCTL_AGENT_ID set to a registered agent's id, wait 2 minutes, rerun).
# Creates in certctl: nothing (audit events for its reads).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

server_time
rfc3339 $((REPLY - 200))
since=$REPLY

: >"$REPRO_TMP/events"
for page in $(seq 10); do
	call GET "/api/v1/audit?since=$since&per_page=500&page=$page"
	expect_status 200 "listing audit events"
	jqb '.data[]? | select(.resource_type == "api") |
	     select(.resource_id | test("^/api/v1/agents/[^/]+/(work|heartbeat)$")) |
	     "\(.resource_id) \(.timestamp)"' >>"$REPRO_TMP/events"
	[ "$(jqb '.data | length')" = 500 ] || break
done

# Median gap per agent and kind, from certctl's timestamps (converted by date: jq 1.6 cannot read
# fractional seconds).
median_gaps() { # KIND (work|heartbeat) → lines "agent n median"
	local kind=$1
	grep "/$kind " "$REPRO_TMP/events" | while read -r path ts; do
		printf '%s %s\n' "$(cut -d/ -f5 <<<"$path")" "$(date -u -d "$ts" +%s.%N)"
	done | sort -k1,1 -k2,2n | awk '
		$1 != agent { agent = $1; last = "" }
		{ if (last != "") gaps[agent] = gaps[agent] " " ($2 - last); last = $2 }
		END {
			for (a in gaps) {
				n = split(substr(gaps[a], 2), g, " ")
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (g[j] < g[i]) { t = g[i]; g[i] = g[j]; g[j] = t }
				printf "%s %d %.1f\n", a, n + 1, (n % 2 ? g[(n + 1) / 2] : (g[n / 2] + g[n / 2 + 1]) / 2)
			}
		}'
}
work=$(median_gaps work)
beat=$(median_gaps heartbeat)
note "work polls (agent, count, median gap s): ${work:-none}"
note "heartbeats (agent, count, median gap s): ${beat:-none}"

# Judge on agents seen polling at least three times (two gaps).
judged=$(awk '$2 >= 3' <<<"$work")
[ -n "$judged" ] || cannot "no agent polled for work three times in the last 200 s of certctl's audit trail: start a certctl agent against this server (CERTCTL_AGENT_ID set to a registered agent), wait two minutes and rerun"

if awk '$3 >= 27 && $3 <= 33 { ok++ } END { exit !(ok == NR) }' <<<"$judged"; then
	reproduces "every agent seen polls for work every ~30 s: $(tr '\n' ';' <<<"$judged") heartbeats: $(tr '\n' ';' <<<"${beat:-none}")"
fi
not_reproduced "agents poll at other intervals (agent, polls, median gap s): $(tr '\n' ';' <<<"$judged")"
