#!/usr/bin/env bash
# Heartbeat or work poll of an unknown agent → 500 (docs/certctl-findings.md#unknown-agent-500).
# Shows: POST /api/v1/agents/{id}/heartbeat and GET /api/v1/agents/{id}/work for an id that was
#   never registered answer 500 ("Failed to record heartbeat", "Failed to get pending work"),
#   not 404.
# Creates in certctl: nothing (audit events for the two requests).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

id="agent-repro-unknown-$REPRO_RUN"
call POST "/api/v1/agents/$id/heartbeat" '{}'
hb=$HTTP_STATUS
hb_msg=$(jqb '.message // empty')
call GET "/api/v1/agents/$id/work"
work=$HTTP_STATUS
work_msg=$(jqb '.message // empty')

if [ "$hb" = 500 ] || [ "$work" = 500 ]; then
	reproduces "for unregistered agent $id: heartbeat $hb '$hb_msg', work poll $work '$work_msg'"
fi
if [ "$hb" = 404 ] && [ "$work" = 404 ]; then
	not_reproduced "heartbeat and work poll of an unregistered agent answer 404"
fi
cannot "heartbeat $hb '$hb_msg', work poll $work '$work_msg'"
