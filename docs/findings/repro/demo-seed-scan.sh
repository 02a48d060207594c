#!/usr/bin/env bash
# The demo seed scans private networks (docs/certctl-findings.md#demo-seed-scan).
# Shows: whether this certctl holds enabled network-scan targets over private ranges, such as the
#   demo data's (nst-dc1-web 10.0.1.0/24, nst-dmz 192.168.100.0/24, …). certctl's scan loop starts
#   at every boot and runs once straight away whatever CERTCTL_NETWORK_SCAN_ENABLED says (read in
#   the source: internal/scheduler/scheduler.go networkScanLoop), so such rows are dialled within
#   seconds of a start. The script only reads; it never triggers a scan.
# Without such rows (the harness never loads the demo data) it exits 2: to see them, start a
#   throwaway certctl with CERTCTL_DEMO_SEED=true inside a network namespace with no route out,
#   then run this again.
# Creates in certctl: nothing (one audit event for the read).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

call GET '/api/v1/network-scan-targets?per_page=500'
expect_status 200 "listing network-scan targets"
private='test("^(10\\.|192\\.168\\.|172\\.(1[6-9]|2[0-9]|3[01])\\.)")'
enabled=$(jqb "[.data[]? | select(.enabled == true and any(.cidrs[]?; $private)) | \"\\(.id) \\(.cidrs | join(\" \")) ports \\(.ports | map(tostring) | join(\",\"))\"] | join(\"; \")")
disabled=$(jqb "[.data[]? | select(.enabled != true and any(.cidrs[]?; $private)) | .id] | join(\", \")")
demo=$(jqb '[.data[]? | select(.id | startswith("nst-")) | .id] | join(", ")')

if [ -n "$enabled" ]; then
	reproduces "enabled scan targets over private ranges, dialled at every start of this certctl: $enabled${demo:+ (demo ids present: $demo)}"
fi
if [ -n "$disabled" ]; then
	cannot "private-range scan targets exist but are disabled ($disabled): the demo data was neutralised, as the harness does; nothing here would be dialled"
fi
cannot "no private-range scan target on this certctl: the demo data is not loaded (CERTCTL_DEMO_SEED=false); load it only inside a namespace with no route out to see this"
