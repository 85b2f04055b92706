#!/bin/sh
# Captures SHOW GLOBAL STATUS before and after a load, and SHOW GLOBAL VARIABLES, from a server
# on 127.0.0.1:PORT into OUTDIR (status.1, status.2, variables): the fixtures of
# dbio-mysql's advise rule tests (testdata/mysql-advise/README.md). With each status it also
# keeps dbio's processlist query (processlist.N: state, threads, longest time) and
# /proc/diskstats (diskstats.N), taken the same moment.
#   scripts/advise-capture.sh PORT OUTDIR LOAD-COMMAND...
# With LOAD_SECS=N in the environment the load runs in the background and the second capture
# is taken after N seconds while it still runs (a processlist state is only seen then); the
# load is then killed with its process group.
set -eu
port=$1 out=$2; shift 2
mkdir -p "$out"
q() { mariadb --no-defaults -h127.0.0.1 -P"$port" -uroot -N -e "$1"; }
pl="SELECT STATE, COUNT(*), COALESCE(MAX(TIME), 0) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND STATE IN ('statistics', 'Waiting for query cache lock', 'Waiting on query cache mutex') GROUP BY STATE"
snap() {
    q 'SHOW GLOBAL STATUS' >"$out/status.$1"
    q "$pl" >"$out/processlist.$1"
    cat /proc/diskstats >"$out/diskstats.$1"
}
snap 1
if [ -n "${LOAD_SECS:-}" ]; then
    # Its own session and process group, to be killed as one.
    setsid "$@" >"$out/load.log" 2>&1 &
    load=$!
    sleep "$LOAD_SECS"
    snap 2
    kill -TERM -- "-$load" 2>/dev/null || true
    wait "$load" 2>/dev/null || true
else
    "$@" >"$out/load.log" 2>&1 || true
    snap 2
fi
q 'SHOW GLOBAL VARIABLES' >"$out/variables"
