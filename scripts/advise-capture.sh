#!/bin/sh
# Captures SHOW GLOBAL STATUS before and after a load, and SHOW GLOBAL VARIABLES, from a server
# on 127.0.0.1:PORT into OUTDIR (status.1, status.2, variables): the fixtures of
# dbio-mysql's advise rule tests (testdata/mysql-advise/README.md).
#   scripts/advise-capture.sh PORT OUTDIR LOAD-COMMAND...
set -eu
port=$1 out=$2; shift 2
mkdir -p "$out"
q() { mariadb --no-defaults -h127.0.0.1 -P"$port" -uroot -N -e "$1"; }
q 'SHOW GLOBAL STATUS' >"$out/status.1"
"$@" >"$out/load.log" 2>&1 || true
q 'SHOW GLOBAL STATUS' >"$out/status.2"
q 'SHOW GLOBAL VARIABLES' >"$out/variables"
