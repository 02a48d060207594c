#!/usr/bin/env bash
# The /auth/* routes sit behind the API's authentication (docs/certctl-findings.md#auth-routes-behind-auth).
# Shows: the OIDC login, its callback and the back-channel logout, which a browser or an identity
#   provider calls without an API key, never reach their handlers without one. API-only, they answer
#   the auth middleware's 401; in dashboard mode, the dashboard's page with 200. Sent again with the
#   admin key, the same requests get the handlers' own answers (404 for an unknown provider, 400 for
#   a callback without code and state or a logout without a token), so the key is what lets them in.
# Exits 2 on a certctl that lets every request in (CERTCTL_AUTH_TYPE=none) or has no OIDC handlers.
# Creates in certctl: nothing but audit events (one unknown provider is asked for, none is made).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

API_NO_AUTH=1 call GET /api/v1/auth/check
if [ "$HTTP_STATUS" = 200 ]; then
	cannot "GET /api/v1/auth/check answered 200 without a key: this certctl lets every request in (CERTCTL_AUTH_TYPE=none), so nothing can show which routes need one"
fi

# Requests whose handler answers are known and harmless; a form body for the logout, as a provider
# sends it.
names=(login callback logout)
methods=(GET GET POST)
paths=("/auth/oidc/login?provider=op-repro-none-$REPRO_RUN" /auth/oidc/callback /auth/oidc/back-channel-logout)
bodies=('' '' 'logout_token=')

# The handlers answer with certctl's JSON error ({"error", "message"}); the auth middleware's 401 is
# text/plain, the dashboard's page text/html, and the mux's own 404 plain text.
handler_answer() { [ "$HTTP_STATUS" != 401 ] && [ -n "$(jqb '.message // empty')" ]; }

bare='' keyed='' n_401=0 n_html=0 n_handler_bare=0 n_handler_keyed=0
for i in "${!names[@]}"; do
	API_NO_AUTH=1 API_CTYPE=application/x-www-form-urlencoded call "${methods[$i]}" "${paths[$i]}" "${bodies[$i]}"
	bare+="${names[$i]} $HTTP_STATUS ${HTTP_CTYPE%%;*}, "
	case "$HTTP_STATUS $HTTP_CTYPE" in
	401\ *) n_401=$((n_401 + 1)) ;;
	200\ text/html*) n_html=$((n_html + 1)) ;;
	esac
	if handler_answer; then n_handler_bare=$((n_handler_bare + 1)); fi
	note "${methods[$i]} ${paths[$i]} without a key: $HTTP_STATUS $HTTP_CTYPE $(snippet)"

	API_CTYPE=application/x-www-form-urlencoded call "${methods[$i]}" "${paths[$i]}" "${bodies[$i]}"
	msg=$(jqb '.message // empty')
	keyed+="${names[$i]} $HTTP_STATUS ${HTTP_CTYPE%%;*}${msg:+ \"$msg\"}, "
	if handler_answer; then n_handler_keyed=$((n_handler_keyed + 1)); fi
	note "${methods[$i]} ${paths[$i]} with the admin key: $HTTP_STATUS $HTTP_CTYPE $(snippet)"
done
bare=${bare%, }
keyed=${keyed%, }
n=${#names[@]}

if [ "$n_html" = "$n" ]; then
	reproduces "dashboard mode: without a key every /auth route answers the dashboard's page ($bare), so no handler runs; with the admin key: $keyed"
fi
if [ "$n_handler_bare" = "$n" ]; then
	not_reproduced "without a key the /auth routes reach their handlers ($bare)"
fi
if [ "$n_handler_keyed" != "$n" ]; then
	cannot "with the admin key the /auth routes did not all answer from their handlers ($keyed): this certctl may have no OIDC wiring; without a key: $bare"
fi
if [ "$n_401" = "$n" ]; then
	reproduces "API-only: without a key the /auth routes answer 401 ($bare); with the admin key they reach their handlers ($keyed)"
fi
cannot "mixed answers without a key ($bare); with the admin key: $keyed"
