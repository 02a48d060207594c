#!/usr/bin/env bash
# Every session request derives a key with 600,000 PBKDF2 rounds (docs/certctl-findings.md#session-pbkdf2-per-request).
# Shows: a request carrying a session cookie makes certctl decrypt the signing key the cookie names,
#   a 600,000-round PBKDF2 derivation, before it checks the cookie's signature. The script needs no
#   session: it times the same GET /api/v1/auth/check, authenticated by the admin key, with no cookie,
#   with a forged cookie naming the real signing key (derivation, then a failed HMAC, then the key),
#   and with a forged cookie naming a key that does not exist (a lookup, no derivation). All answer
#   200 through the key. Reproduces when the real key id's median is more than 50 ms above both
#   others; the derivation alone is ~170 ms of one core on the harness's machine.
# Exits 2 when the signing key is not sealed as a v3 blob (no CERTCTL_CONFIG_ENCRYPTION_KEY: the key
#   is stored in clear and nothing is derived).
# Needs PGURL (the signing key's id and form are only in the database). Creates nothing but audit events.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need_pg

# certctl makes its first signing key at start (EnsureInitialSigningKey), so one is always there.
pgq "SELECT id || ' ' || length(key_material_encrypted) || ' ' || get_byte(key_material_encrypted, 0)
       FROM session_signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1;"
read -r key len magic <<<"$REPLY"
[ -n "${key-}" ] || cannot "session_signing_keys has no active key: certctl makes one at start, so this database may not be this certctl's"
# v3: magic byte 3, 16 bytes of salt, a 12-byte nonce, the 32-byte key and a 16-byte tag.
if [ "$magic" != 3 ] || [ "$len" != 77 ]; then
	cannot "signing key $key is $len bytes starting with byte $magic, not a v3 blob (77 bytes, byte 3): without CERTCTL_CONFIG_ENCRYPTION_KEY the key is kept in clear and nothing is derived"
fi

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# One timed call; extra curl arguments choose the form. Sequential, so the figures are one
# request's cost, not a queue's.
timed() { # → "status seconds"
	curl -sS --max-time 20 --cacert "$CA" -o /dev/null -w '%{http_code} %{time_total}\n' \
		-H "Authorization: Bearer $T" "$@" "$B/api/v1/auth/check" 2>/dev/null || echo "000 0"
}

# A well-formed cookie (v1, a ses- id, an sk- id, 32 bytes of HMAC) whose HMAC is zeros.
mac=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
real="__Host-certctl_session=v1.ses-repro-$REPRO_RUN.$key.$mac"
unknown="__Host-certctl_session=v1.ses-repro-$REPRO_RUN.sk-repro-none-$REPRO_RUN.$mac"

t_none='' t_real='' t_unknown='' bad=''
# Interleaved, so a change in the machine's load during the run affects the three alike.
for _ in 1 2 3 4 5 6 7 8 9 10; do
	read -r s t <<<"$(timed)"
	t_none+="$t"$'\n'
	[ "$s" = 200 ] || bad+="no cookie $s; "
	read -r s t <<<"$(timed -H "Cookie: $real")"
	t_real+="$t"$'\n'
	[ "$s" = 200 ] || bad+="real key id $s; "
	read -r s t <<<"$(timed -H "Cookie: $unknown")"
	t_unknown+="$t"$'\n'
	[ "$s" = 200 ] || bad+="unknown key id $s; "
done
[ -z "$bad" ] || cannot "GET /api/v1/auth/check with the admin key did not always answer 200: ${bad%; }"

ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
m_none=$(printf '%s' "$t_none" | median)
m_real=$(printf '%s' "$t_real" | median)
m_unknown=$(printf '%s' "$t_unknown" | median)
figures="median of 10 each: no cookie $(ms "$m_none") ms, forged cookie naming signing key $key $(ms "$m_real") ms, forged cookie naming an unknown key $(ms "$m_unknown") ms"

if awk -v r="$m_real" -v n="$m_none" -v u="$m_unknown" 'BEGIN { exit !(r - n > 0.05 && r - u > 0.05) }'; then
	reproduces "a cookie naming the real signing key costs certctl a key derivation before its signature is refused: $figures"
fi
not_reproduced "a cookie naming the real signing key is not measurably dearer: $figures"
