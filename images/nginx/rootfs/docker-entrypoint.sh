#!/bin/sh
# Entrypoint of the offline nginx stand-in: like the official image's, it runs the executable *.sh scripts
# (and sources *.envsh) in /docker-entrypoint.d/ when the command is nginx or nginx-debug, then execs it.
set -e

if [ -z "${NGINX_ENTRYPOINT_QUIET_LOGS:-}" ]; then
    exec 3>&1
else
    exec 3>/dev/null
fi

if [ "$1" = "nginx" ] || [ "$1" = "nginx-debug" ]; then
    if find /docker-entrypoint.d/ -mindepth 1 -maxdepth 1 -type f -print -quit 2>/dev/null | read -r _; then
        echo >&3 "$0: /docker-entrypoint.d/ is not empty, will attempt to perform configuration"
        for f in $(find /docker-entrypoint.d/ -follow -type f -print | sort -V); do
            case "$f" in
                *.envsh)
                    if [ -x "$f" ]; then
                        echo >&3 "$0: Sourcing $f"
                        . "$f"
                    else
                        echo >&3 "$0: Ignoring $f, not executable"
                    fi
                    ;;
                *.sh)
                    if [ -x "$f" ]; then
                        echo >&3 "$0: Launching $f"
                        "$f"
                    else
                        echo >&3 "$0: Ignoring $f, not executable"
                    fi
                    ;;
                *) echo >&3 "$0: Ignoring $f" ;;
            esac
        done
        echo >&3 "$0: Configuration complete; ready for start up"
    else
        echo >&3 "$0: No files found in /docker-entrypoint.d/, skipping configuration"
    fi
fi

exec "$@"
