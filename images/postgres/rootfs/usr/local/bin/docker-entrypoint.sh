#!/usr/bin/env bash
# Entrypoint of the offline postgres stand-in (images/postgres). It follows the documented contract of the
# official postgres image's entrypoint, on Debian's PostgreSQL 15:
#   POSTGRES_PASSWORD, POSTGRES_USER (default postgres), POSTGRES_DB (default $POSTGRES_USER), each also as
#   <VAR>_FILE; POSTGRES_INITDB_ARGS, POSTGRES_INITDB_WALDIR, POSTGRES_HOST_AUTH_METHOD; PGDATA;
#   /docker-entrypoint-initdb.d/*.sh (executable: run, else sourced), *.sql, *.sql.gz, *.sql.xz, *.sql.zst;
#   `host all all all scram-sha-256` appended to pg_hba.conf; extra arguments go to postgres
#   (`postgres -c fsync=off`, or just `-c fsync=off`); started as root it drops to user postgres.
# During initialisation the temporary server listens on the unix socket only, so a TCP probe
# (pg_isready -h 127.0.0.1) passes only once the real server is up.
set -Eeo pipefail

# file_env VAR [DEFAULT]: VAR from the environment, or from the file named by VAR_FILE.
file_env() {
	local var=$1 fileVar="${1}_FILE" def=${2:-}
	if [ "${!var:-}" ] && [ "${!fileVar:-}" ]; then
		echo >&2 "error: both $var and $fileVar are set (but are exclusive)"
		exit 1
	fi
	local val=$def
	if [ "${!var:-}" ]; then
		val=${!var}
	elif [ "${!fileVar:-}" ]; then
		val=$(<"${!fileVar}")
	fi
	export "$var"="$val"
	unset "$fileVar"
}

docker_setup_env() {
	file_env POSTGRES_PASSWORD
	file_env POSTGRES_USER postgres
	file_env POSTGRES_DB "$POSTGRES_USER"
	file_env POSTGRES_INITDB_ARGS
	: "${POSTGRES_HOST_AUTH_METHOD:=}"
	declare -g DATABASE_ALREADY_EXISTS=
	if [ -s "$PGDATA/PG_VERSION" ]; then DATABASE_ALREADY_EXISTS=true; fi
}

docker_create_db_directories() {
	local user; user=$(id -u)
	mkdir -p "$PGDATA"
	chmod 00700 "$PGDATA" || :
	mkdir -p /var/run/postgresql || :
	chmod 03775 /var/run/postgresql || :
	if [ -n "${POSTGRES_INITDB_WALDIR:-}" ]; then
		mkdir -p "$POSTGRES_INITDB_WALDIR"
		if [ "$user" = 0 ]; then find "$POSTGRES_INITDB_WALDIR" \! -user postgres -exec chown postgres '{}' +; fi
		chmod 700 "$POSTGRES_INITDB_WALDIR"
	fi
	if [ "$user" = 0 ]; then
		find "$PGDATA" \! -user postgres -exec chown postgres '{}' +
		find /var/run/postgresql \! -user postgres -exec chown postgres '{}' +
	fi
}

docker_verify_minimum_env() {
	if [ -z "$POSTGRES_PASSWORD" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
		cat >&2 <<-'EOE'
			Error: Database is uninitialized and superuser password is not specified.
			       You must specify POSTGRES_PASSWORD to a non-empty value for the
			       superuser. For example, "-e POSTGRES_PASSWORD=password" on "docker run".

			       You may also use "POSTGRES_HOST_AUTH_METHOD=trust" to allow all
			       connections without a password. This is *not* recommended.
		EOE
		exit 1
	fi
	if [ "$POSTGRES_HOST_AUTH_METHOD" = trust ]; then
		echo >&2 'WARNING: POSTGRES_HOST_AUTH_METHOD=trust: every connection is accepted without a password.'
	fi
}

docker_init_database_dir() {
	local -a waldir=()
	if [ -n "${POSTGRES_INITDB_WALDIR:-}" ]; then waldir=(--waldir "$POSTGRES_INITDB_WALDIR"); fi
	# POSTGRES_INITDB_ARGS is word-split on purpose (e.g. "--data-checksums --locale=C").
	# shellcheck disable=SC2086
	initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") \
		"${waldir[@]}" $POSTGRES_INITDB_ARGS
	# The socket where upstream's server puts it and the clients (Debian's psql, pg_isready) look: this
	# build's own default is /tmp, which initdb writes into the configuration.
	printf "\nunix_socket_directories = '/var/run/postgresql'\n" >>"$PGDATA/postgresql.conf"
}

# Like upstream: password auth (the server's password_encryption, scram-sha-256 by default) from anywhere.
pg_setup_hba_conf() {
	if [ "${1:-}" = postgres ]; then shift; fi
	local auth=$POSTGRES_HOST_AUTH_METHOD
	if [ -z "$auth" ]; then
		auth=$(postgres -C password_encryption "$@")
	fi
	{
		printf '\n'
		if [ "$auth" = trust ]; then printf '# warning trust is enabled for all connections\n'; fi
		printf 'host all all all %s\n' "$auth"
	} >>"$PGDATA/pg_hba.conf"
}

# Temporary server for the init scripts: unix socket only.
docker_temp_server_start() {
	if [ "${1:-}" = postgres ]; then shift; fi
	set -- "$@" -c listen_addresses='' -p "${PGPORT:-5432}"
	PGUSER="${PGUSER:-$POSTGRES_USER}" pg_ctl -D "$PGDATA" -o "$(printf '%q ' "$@")" -w start
}

docker_temp_server_stop() {
	PGUSER="${PGUSER:-postgres}" pg_ctl -D "$PGDATA" -m fast -w stop
}

# docker_process_sql [psql args...]: runs psql against the temporary server as POSTGRES_USER.
docker_process_sql() {
	local -a query_runner=(psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc)
	if [ -n "$POSTGRES_DB" ]; then query_runner+=(--dbname "$POSTGRES_DB"); fi
	PGHOST= PGHOSTADDR= "${query_runner[@]}" "$@"
}

docker_setup_db() {
	local exists
	exists=$(POSTGRES_DB= docker_process_sql --dbname postgres --set db="$POSTGRES_DB" --tuples-only <<-'EOSQL'
		SELECT 1 FROM pg_database WHERE datname = :'db' ;
	EOSQL
	)
	if [ -z "$exists" ]; then
		POSTGRES_DB= docker_process_sql --dbname postgres --set db="$POSTGRES_DB" <<-'EOSQL'
			CREATE DATABASE :"db" ;
		EOSQL
		printf '\n'
	fi
}

docker_process_init_files() {
	printf '\n'
	local f
	for f; do
		case "$f" in
			*.sh)
				if [ -x "$f" ]; then
					printf '%s: running %s\n' "$0" "$f"
					"$f"
				else
					printf '%s: sourcing %s\n' "$0" "$f"
					# shellcheck disable=SC1090
					. "$f"
				fi
				;;
			*.sql) printf '%s: running %s\n' "$0" "$f"; docker_process_sql -f "$f"; printf '\n' ;;
			*.sql.gz) printf '%s: running %s\n' "$0" "$f"; gunzip -c "$f" | docker_process_sql; printf '\n' ;;
			*.sql.xz) printf '%s: running %s\n' "$0" "$f"; xzcat "$f" | docker_process_sql; printf '\n' ;;
			*.sql.zst) printf '%s: running %s\n' "$0" "$f"; zstd -dc "$f" | docker_process_sql; printf '\n' ;;
			*) printf '%s: ignoring %s\n' "$0" "$f" ;;
		esac
		printf '\n'
	done
}

# Arguments that only print something (postgres --help, -V, --describe-config, -C): no init, no privileges drop.
_pg_want_help() {
	local arg
	for arg; do
		case "$arg" in
			-'?' | --help | --describe-config | -V | --version) return 0 ;;
		esac
	done
	return 1
}

_main() {
	# `docker run postgres-image -c fsync=off` means `postgres -c fsync=off`.
	if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi

	if [ "$1" = postgres ] && ! _pg_want_help "$@"; then
		docker_setup_env
		docker_create_db_directories
		if [ "$(id -u)" = 0 ]; then
			# Re-run this script as postgres (setpriv: no PAM session, signals reach postgres directly).
			exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
		fi

		if [ -z "$DATABASE_ALREADY_EXISTS" ]; then
			docker_verify_minimum_env
			ls /docker-entrypoint-initdb.d/ >/dev/null # fails early on a mount postgres cannot read
			docker_init_database_dir
			pg_setup_hba_conf "$@"
			export PGPASSWORD="${PGPASSWORD:-$POSTGRES_PASSWORD}"
			docker_temp_server_start "$@"
			docker_setup_db
			shopt -s nullglob
			docker_process_init_files /docker-entrypoint-initdb.d/*
			shopt -u nullglob
			docker_temp_server_stop
			unset PGPASSWORD
			printf '\nPostgreSQL init process complete; ready for start up.\n\n'
		else
			printf '\nPostgreSQL Database directory appears to contain a database; Skipping initialization\n\n'
		fi
	fi

	exec "$@"
}

# Sourced (e.g. by an initdb.d script that wants docker_process_sql): define the functions only.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then _main "$@"; fi
