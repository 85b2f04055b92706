#!/bin/sh
# The cost of dbio mysql stalk's checks: runs the stalker for SECS seconds with a trigger that
# never holds, at --interval INTERVAL, against DSN (default the local test server), then
# reports per check: the statements the server counted (Questions, Com_show_status,
# Com_show_processlist deltas, the script's own two reads taken out), the client's mean time
# for a check's sample (both statements' round trips: an upper bound of their server time),
# and the stalker's CPU (utime + stime from /proc) as % of one CPU. Where the server has
# performance_schema ON, also the server's own time for the check's statements
# (events_statements_summary_by_digest: SUM_TIMER_WAIT of SHOW GLOBAL STATUS, full or of the
# trigger's variables, and SHOW FULL PROCESSLIST, the stalker's only per-check statements).
# Extra stalker flags: STALK_ARGS (e.g. STALK_ARGS='--full-status-every 1' for pt-stalk's way).
# Usage: scripts/stalk-cost.sh [SECS] [INTERVAL] [DSN]   (MYSQL_PORT for the script's own reads)
set -eu
SECS=${1:-30}
INTERVAL=${2:-1s}
DSN=${3:-mysql://root@127.0.0.1:3306/}
DBIO=${DBIO:-target/release/dbio}
[ -x "$DBIO" ] || DBIO=target/debug/dbio
MYSQL="mysql -h127.0.0.1 -P${MYSQL_PORT:-3306} -uroot -N -B"
# Server time (ps) and calls of the stalker's per-check statements, when performance_schema is on.
ps_on=$($MYSQL -e "SELECT @@performance_schema")
digests() {
  [ "$ps_on" = 1 ] || { echo "0 0"; return; }
  $MYSQL -e "SELECT IFNULL(SUM(SUM_TIMER_WAIT),0), IFNULL(SUM(COUNT_STAR),0) FROM performance_schema.events_statements_summary_by_digest WHERE DIGEST_TEXT LIKE 'SHOW GLOBAL STATUS%' OR DIGEST_TEXT LIKE 'SHOW FULL PROCESSLIST%'"
}
status() { $MYSQL -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions','Com_show_status','Com_show_processlist')" | awk '{printf "%s=%s ", $1, $2}'; }
DEST=$(mktemp -d)
LOG=$(mktemp)
before=$(status)
d0=$(digests)
"$DBIO" mysql stalk --dsn "$DSN" --dest "$DEST" --trigger 'Threads_running>100000' \
    --interval "$INTERVAL" ${STALK_ARGS:-} 2>"$LOG" &
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
d1=$(digests)
checks=$(sed -n 's/.*stopped after \([0-9]*\) checks.*/\1/p' "$LOG")
mean=$(sed -n 's/.*took \([0-9.]*\) ms on average.*/\1/p' "$LOG")
tick=$(getconf CLK_TCK)
echo "$before" "$after" | awk -v checks="$checks" -v mean="$mean" -v t0="$t0" -v t1="$t1" -v w0="$w0" -v w1="$w1" -v tick="$tick" -v iv="$INTERVAL" -v d0="$d0" -v d1="$d1" -v ps="$ps_on" '
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
  if (ps == 1) {
    split(d0, x, " "); split(d1, y, " ")
    # One SHOW GLOBAL STATUS of this script is among them (of the order of the others).
    printf "server time of a check (performance_schema, SHOW GLOBAL STATUS + SHOW FULL PROCESSLIST): %.3f ms over %d statements\n", (y[1] - x[1]) / 1e9 / checks, y[2] - x[2]
  } else {
    printf "server time of a check: not measured (performance_schema is OFF on the server)\n"
  }
}'
rm -rf "$DEST" "$LOG"
