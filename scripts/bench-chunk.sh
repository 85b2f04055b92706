#!/usr/bin/env bash
# Performance and impact of `dbio mysql chunk` against pt-archiver (a script, not a test).
#
# On the local MariaDB: a table of ROWS rows (default 1,000,000); delete half of it (k % 2 = 0,
# spread over the whole key) with dbio and with pt-archiver at the same chunk size, while a
# foreground load runs (sysbench oltp_read_write, FG_THREADS threads, on its own database).
# For each: rows/s and total time of the job, and the foreground's tps and p99 latency while
# the job ran, against a baseline of the foreground alone.
#
# Chunk size: pt-archiver's --limit counts rows it deletes; dbio's chunk counts key rows it
# walks. Half the rows match, so dbio walks 2 x LIMIT key rows per chunk (fixed: --chunk-size
# = --chunk-min = --chunk-max) to delete about LIMIT rows per chunk, as pt-archiver does.
# Throttle: dbio sleeps --sleep-coef x the chunk's whole time; pt-archiver --sleep-coef sleeps
# that multiple of its last SELECT only (it needs --sleep to be set for that), so it is run at
# several coefficients to find the one of the same impact.
#
# Foreground figures come from sysbench's per-second reports (--report-interval 1
# --percentile 99) over the seconds the job ran: tps is their mean, p99 the median of the
# per-second 99th percentiles (sysbench prints no whole-run percentile for a window).
#
# Usage: scripts/bench-chunk.sh [ROWS]      (env: DSN_HOST, FG_THREADS, LIMIT, BASELINE_S,
#                                            DBIO_COEFS, PT_COEFS, DBIO)
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${1:-1000000}
HOST=${DSN_HOST:-127.0.0.1}
PORT=${DSN_PORT:-3306}
FG_THREADS=${FG_THREADS:-4}
LIMIT=${LIMIT:-1000}
BASELINE_S=${BASELINE_S:-30}
DBIO_COEFS=${DBIO_COEFS:-"1"}
PT_COEFS=${PT_COEFS:-"1 4"}
DBIO=${DBIO:-target/release/dbio}
DB=chunk_bench
FG_DB=chunk_bench_fg
WORK=$(mktemp -d /tmp/bench-chunk.XXXXXX)
trap 'kill "${SB_PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT

need() { command -v "$1" >/dev/null || { echo "bench-chunk: $1 is missing ($2)" >&2; exit 1; }; }
need mariadb "apt-get install mariadb-client"
need sysbench "apt-get install sysbench"
need pt-archiver "apt-get install percona-toolkit"
if [ ! -x "$DBIO" ]; then
  echo "bench-chunk: building $DBIO" >&2
  cargo build --release -p dbio >&2
fi

sql() { mariadb -h"$HOST" -P"$PORT" -uroot -N -B "$@"; }
SB=(sysbench oltp_read_write --db-driver=mysql --mysql-host="$HOST" --mysql-port="$PORT"
    --mysql-user=root --mysql-db="$FG_DB" --tables=4 --table-size=20000)

echo "bench-chunk: preparing the foreground database ($FG_DB) and $ROWS rows in $DB.jobs" >&2
sql -e "DROP DATABASE IF EXISTS $FG_DB; CREATE DATABASE $FG_DB; DROP DATABASE IF EXISTS $DB; CREATE DATABASE $DB"
"${SB[@]}" prepare >/dev/null

make_table() {
  sql "$DB" -e "DROP TABLE IF EXISTS jobs;
    CREATE TABLE jobs (id INT UNSIGNED NOT NULL PRIMARY KEY, k INT NOT NULL,
      created DATETIME NOT NULL, payload VARCHAR(100) NOT NULL) ENGINE=InnoDB;
    INSERT INTO jobs SELECT seq, seq, '2020-01-01' + INTERVAL seq SECOND, REPEAT('x', 80)
      FROM seq_1_to_$ROWS;
    ANALYZE TABLE jobs" >/dev/null
}

# Starts the foreground load (per-second reports into $1); sets SB_PID and SB_T0.
fg_start() {
  "${SB[@]}" --threads="$FG_THREADS" --time=3600 --report-interval=1 --percentile=99 run >"$1" 2>&1 &
  SB_PID=$!
  SB_T0=$(date +%s.%N)
  sleep 5 # warm-up: its first seconds are not measured
}
fg_stop() { kill "$SB_PID" 2>/dev/null || true; wait "$SB_PID" 2>/dev/null || true; SB_PID=; }

# Foreground figures for seconds (from, to] after SB_T0: "tps p99_ms".
fg_window() {
  awk -v a="$2" -v b="$3" '
    /^\[ *[0-9]+s \]/ {
      t = $2; sub(/s/, "", t); t += 0
      if (t > a && t <= b) {
        for (i = 1; i <= NF; i++) {
          if ($i == "tps:") tps += $(i + 1)
          if ($i == "(ms,99%):") p[n++] = $(i + 1)
        }
        m++
      }
    }
    END {
      if (m == 0) { print "? ?"; exit }
      # median of the per-second p99s
      for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (p[j] < p[i]) { x = p[i]; p[i] = p[j]; p[j] = x }
      printf "%.1f %.2f\n", tps / m, (n % 2 ? p[int(n / 2)] : (p[n / 2 - 1] + p[n / 2]) / 2)
    }' "$1"
}

now() { date +%s.%N; }
since() { awk -v a="$SB_T0" -v b="$1" 'BEGIN { printf "%.0f", b - a }'; }

RESULTS="$WORK/results"
: >"$RESULTS"

# Baseline: the foreground alone.
make_table
fg_start "$WORK/fg-baseline.log"
t0=$(now); sleep "$BASELINE_S"; t1=$(now)
read -r b_tps b_p99 < <(fg_window "$WORK/fg-baseline.log" "$(since "$t0")" "$(since "$t1")")
fg_stop
echo "baseline(no-job) - - - $b_tps $b_p99" >>"$RESULTS"

run_job() { # name log-prefix command...
  local name=$1 tag=$2; shift 2
  make_table
  local before; before=$(sql "$DB" -e "SELECT COUNT(*) FROM jobs WHERE k % 2 = 0")
  fg_start "$WORK/fg-$tag.log"
  local t0 t1; t0=$(now)
  "$@" >"$WORK/job-$tag.out" 2>&1 || { echo "bench-chunk: $name failed:" >&2; cat "$WORK/job-$tag.out" >&2; exit 1; }
  t1=$(now)
  local tps p99; read -r tps p99 < <(fg_window "$WORK/fg-$tag.log" "$(since "$t0")" "$(since "$t1")")
  fg_stop
  local left; left=$(sql "$DB" -e "SELECT COUNT(*) FROM jobs WHERE k % 2 = 0")
  [ "$left" = 0 ] || { echo "bench-chunk: $name left $left rows" >&2; exit 1; }
  awk -v n="$name" -v r="$before" -v a="$t0" -v b="$t1" -v tps="$tps" -v p="$p99" \
    'BEGIN { s = b - a; printf "%s %d %.1f %.0f %s %s\n", n, r, s, r / s, tps, p }' >>"$RESULTS"
}

for c in $DBIO_COEFS; do
  rm -f "$WORK/state-$c.json"
  run_job "dbio(sleep-coef=$c)" "dbio-$c" "$DBIO" mysql chunk \
    --dsn "mysql://root@$HOST:$PORT/$DB" --table jobs --where "k % 2 = 0" --delete --execute \
    --chunk-size $((2 * LIMIT)) --chunk-min $((2 * LIMIT)) --chunk-max $((2 * LIMIT)) \
    --sleep-coef "$c" --max-load 1000 --critical-load 2000 --state "$WORK/state-$c.json"
done
for c in $PT_COEFS; do
  run_job "pt-archiver(sleep-coef=$c)" "pt-$c" pt-archiver \
    --source "h=$HOST,P=$PORT,u=root,D=$DB,t=jobs" --where "k % 2 = 0" --purge \
    --limit "$LIMIT" --bulk-delete --commit-each --sleep 1 --sleep-coef "$c" --no-check-charset
done

{
  echo "rows in the table: $ROWS; deleted: half (k % 2 = 0); about $LIMIT rows deleted per chunk"
  echo "foreground: sysbench oltp_read_write, $FG_THREADS threads, 4 tables x 20000 rows"
  echo "machine: $(nproc) cores, $(uname -r), $(mariadb --version | awk '{print $5}' | tr -d ,) ; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  printf "%-26s %9s %9s %9s %10s %12s %9s\n" job rows time_s rows_per_s fg_tps fg_p99_ms p99_x
  while read -r n r s rs tps p; do
    x=$(awk -v p="$p" -v b="$b_p99" 'BEGIN { if (p == "?" || b == 0) print "?"; else printf "%.2f", p / b }')
    printf "%-26s %9s %9s %9s %10s %12s %9s\n" "$n" "$r" "$s" "$rs" "$tps" "$p" "$x"
  done <"$RESULTS"
}
