#!/bin/sh
# The cost of dbio mysql stalk's checks: runs the stalker for SECS seconds with a trigger that
# never holds, at --interval INTERVAL, against DSN (default the local test server), then
# reports per check: the statements the server counted (Questions, Com_show_status,
# Com_show_processlist deltas, the script's own two reads taken out), the client's mean time
# for a check's sample (both statements' round trips: an upper bound of their server time),
# and the stalker's CPU (utime + stime from /proc) as % of one CPU.
# Usage: scripts/stalk-cost.sh [SECS] [INTERVAL] [DSN]
set -eu
SECS=${1:-30}
INTERVAL=${2:-1s}
DSN=${3:-mysql://root@127.0.0.1:3306/}
DBIO=${DBIO:-target/release/dbio}
[ -x "$DBIO" ] || DBIO=target/debug/dbio
MYSQL="mysql -h127.0.0.1 -uroot -N -B"
status() { $MYSQL -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions','Com_show_status','Com_show_processlist')" | awk '{printf "%s=%s ", $1, $2}'; }
DEST=$(mktemp -d)
LOG=$(mktemp)
before=$(status)
"$DBIO" mysql stalk --dsn "$DSN" --dest "$DEST" --trigger 'Threads_running>100000' \
    --interval "$INTERVAL" 2>"$LOG" &
PID=$!
sleep 1
t0=$(awk '{print $14+$15}' /proc/$PID/stat)
w0=$(date +%s.%N)
sleep "$SECS"
t1=$(awk '{print $14+$15}' /proc/$PID/stat)
w1=$(date +%s.%N)
kill -TERM $PID
wait $PID || true
after=$(status)
checks=$(sed -n 's/.*stopped after \([0-9]*\) checks.*/\1/p' "$LOG")
mean=$(sed -n 's/.*took \([0-9.]*\) ms on average.*/\1/p' "$LOG")
tick=$(getconf CLK_TCK)
echo "$before" "$after" | awk -v checks="$checks" -v mean="$mean" -v t0="$t0" -v t1="$t1" -v w0="$w0" -v w1="$w1" -v tick="$tick" -v iv="$INTERVAL" '
{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (seen[kv[1]]++) b[kv[1]] = kv[2]; else a[kv[1]] = kv[2] } }
END {
  # The script itself ran one SHOW GLOBAL STATUS between the two readings (the second one).
  q = b["Questions"] - a["Questions"] - 1
  ss = b["Com_show_status"] - a["Com_show_status"] - 1
  pl = b["Com_show_processlist"] - a["Com_show_processlist"]
  printf "interval %s, %d checks\n", iv, checks
  printf "server statements per check: %.2f (SHOW GLOBAL STATUS %.2f, SHOW FULL PROCESSLIST %.2f)\n", q / checks, ss / checks, pl / checks
  printf "client time of a check sample (round trips + /proc reads): %.3f ms\n", mean
  printf "client CPU: %.3f%% of one CPU\n", 100 * (t1 - t0) / tick / (w1 - w0)
}'
rm -rf "$DEST" "$LOG"
