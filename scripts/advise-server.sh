#!/bin/sh
# A throwaway MariaDB for `dbio mysql advise` states: its own datadir, port and socket.
#   scripts/advise-server.sh start DIR PORT [mariadbd options...]   (prints nothing; waits until it answers)
#   scripts/advise-server.sh stop DIR                               (stops the server this script started in DIR)
set -eu
cmd=$1 dir=$2
case $cmd in
start)
    port=$3; shift 3
    mkdir -p "$dir"
    if [ ! -d "$dir/data/mysql" ]; then
        mariadb-install-db --no-defaults --datadir="$dir/data" --auth-root-authentication-method=normal \
            --skip-test-db --user="$(id -un)" >"$dir/install.log" 2>&1
    fi
    mariadbd --no-defaults --datadir="$dir/data" --port="$port" --bind-address=127.0.0.1 \
        --socket="$dir/sock" --pid-file="$dir/pid" --user="$(id -un)" --skip-log-bin "$@" \
        >"$dir/err.log" 2>&1 &
    i=0
    until mariadb --no-defaults -h127.0.0.1 -P"$port" -uroot -e 'SELECT 1' >/dev/null 2>&1; do
        i=$((i+1)); [ $i -lt 300 ] || { cat "$dir/err.log" >&2; exit 1; }
        sleep 0.2
    done
    mariadb --no-defaults -h127.0.0.1 -P"$port" -uroot -e 'CREATE DATABASE IF NOT EXISTS sbtest'
    ;;
stop)
    [ -f "$dir/pid" ] && kill "$(cat "$dir/pid")" 2>/dev/null || true
    i=0; while [ -f "$dir/pid" ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i+1)); done
    ;;
esac
