#!/usr/bin/env bash
# Performance of `dbio innodb rows` (a measurement, not a test): a table of ROWS rows (default
# 2,000,000: INT key, BIGINT, DATETIME(6), DECIMAL(12,2), VARCHAR(64) utf8mb4, CHAR(8) latin1)
# made by a MariaDB in database rows_bench, copied consistently (FLUSH TABLES ... FOR EXPORT)
# to /dev/shm, read once so it is in the page cache, then decoded into TSV (stdout to
# /dev/null) with a release build, best of 3 (wall time). Prints the tablespace size, the
# INDEX leaf bytes, rows/s and MB/s of leaf pages, the CPU time (user+sys) per GB of leaf
# pages (less sensitive to other load than the wall time), and checks the row count against
# the server's.
#
# Usage: scripts/bench-innodb-rows.sh [ROWS] [-- EXTRA DBIO ARGS]   (needs root to read the datadir)
# Environment: SHAPE, the table (mixed, the default, above; payment: sakila's payment table,
# INT/SMALLINT/TINYINT, a NULL-able INT, DECIMAL(5,2), DATETIME, TIMESTAMP); ROW_FORMAT, the table's row format clause (default "dynamic"; e.g.
# "compressed key_block_size=8": the MB/s of leaf pages are then of the decompressed 16 KiB
# pages, the MB/s of tablespace of the compressed ones); MARIADB_ARGS, the client's connection arguments (default "-h127.0.0.1 -uroot";
# e.g. "-S /dev/shm/db/sock -uroot" for an instance of your own); DBIO, a dbio binary to
# measure instead of building this tree's (to compare with another commit's).
# Example: scripts/bench-innodb-rows.sh 2000000 -- --threads 1
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-2000000}
shift || true
[ "${1:-}" = "--" ] && shift
read -r -a CONN <<< "${MARIADB_ARGS:--h127.0.0.1 -uroot}"
WORK=$(mktemp -d /dev/shm/dbio-rows-bench.XXXXXX)
trap 'rm -rf "$WORK"; mariadb "${CONN[@]}" -e "drop database if exists rows_bench" || true' EXIT
SQL() { mariadb "${CONN[@]}" -B -N "$@"; }
if [ -z "${DBIO:-}" ]; then
  cargo build --release -q -p dbio
  DBIO=${CARGO_TARGET_DIR:-target}/release/dbio
fi
case "${SHAPE:-mixed}" in
  mixed) TABLE="create table rows_bench.t (id int primary key, b bigint, dt datetime(6), amount decimal(12,2),
    name varchar(64) character set utf8mb4, code char(8) character set latin1) row_format=${ROW_FORMAT:-dynamic};
  use rows_bench; insert into rows_bench.t select seq, seq * 7919, '2020-01-01 00:00:00' + interval seq second + interval seq microsecond,
    seq / 100, concat('customer name ', seq, ' Grüße'), lpad(seq % 100000, 8, '0') from seq_1_to_$ROWS;" ;;
  # sakila's payment table, with an INT key for millions of rows: small fixed-width fields, a
  # NULL-able column, DECIMAL, DATETIME and TIMESTAMP (the most rows per page of any shape here).
  payment) TABLE="create table rows_bench.t (payment_id int unsigned primary key, customer_id smallint unsigned not null,
    staff_id tinyint unsigned not null, rental_id int null, amount decimal(5,2) not null, payment_date datetime not null,
    last_update timestamp not null default current_timestamp) row_format=${ROW_FORMAT:-dynamic};
  use rows_bench; insert into rows_bench.t select seq, seq % 599 + 1, seq % 2 + 1, if(seq % 50 = 0, null, seq), (seq % 1100) / 100,
    '2005-05-24 22:53:30' + interval seq second, '2006-02-15 22:12:30' + interval (seq % 86400) second from seq_1_to_$ROWS;" ;;
  *) echo "bench-innodb-rows: SHAPE is mixed or payment" >&2; exit 2 ;;
esac
SQL -e "drop database if exists rows_bench; create database rows_bench; $TABLE"
DATADIR=$(SQL -e "select @@datadir")
SQL -e "use rows_bench; flush tables t for export; system cp ${DATADIR}rows_bench/t.ibd $WORK/t.ibd; unlock tables;"
SQL -e "show create table rows_bench.t" | cut -f2- | sed 's/\\n/\n/g' > "$WORK/t.sql"
cat "$WORK/t.ibd" > /dev/null
SIZE=$(stat -c %s "$WORK/t.ibd")
best="" cpu=""
TIMEFORMAT='%R %U %S'
for _ in 1 2 3; do
  { time "$DBIO" innodb rows "$WORK/t.ibd" --table-def "$WORK/t.sql" --format tsv --summary "$WORK/s.json" "$@" > /dev/null 2>"$WORK/err"; } 2>"$WORK/time"
  read -r t u s < "$WORK/time"
  c=$(echo "$u + $s" | bc -l)
  if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
  if [ -z "$cpu" ] || [ "$(echo "$c < $cpu" | bc -l)" = 1 ]; then cpu=$c; fi
done
written=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rows_written'])" "$WORK/s.json")
pages=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['pages_decoded'])" "$WORK/s.json")
[ "$written" = "$ROWS" ] || { echo "bench-innodb-rows: $written rows decoded, $ROWS expected" >&2; cat "$WORK/err" >&2; exit 1; }
python3 - "$SIZE" "$pages" "$written" "$best" "$cpu" <<'PY'
import sys
size, pages, rows, t, cpu = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
leaf = pages * 16384
print(f"tablespace {size/1e6:.1f} MB, {pages} leaf pages ({leaf/1e6:.1f} MB), {rows} rows")
print(f"best of 3: {t:.2f} s = {rows/t:,.0f} rows/s, {leaf/1e6/t:.0f} MB/s of leaf pages, {size/1e6/t:.0f} MB/s of tablespace")
print(f"CPU (user+sys, least of 3): {cpu:.2f} s = {cpu/(leaf/1e9):.2f} CPU-s per GB of leaf pages ({leaf/1e6/cpu:.0f} MB per CPU-second)")
PY
