#!/bin/sh
# Entrypoint of the offline haproxy stand-in, same contract as the official image's:
# options only (`-f x.cfg`) mean `haproxy <options>`, and `haproxy ...` gets -W (master-worker, reload with
# SIGUSR2) and -db (stay in the foreground).
set -e
if [ "${1#-}" != "$1" ]; then
	set -- haproxy "$@"
fi
if [ "$1" = haproxy ]; then
	shift
	set -- haproxy -W -db "$@"
fi
exec "$@"
