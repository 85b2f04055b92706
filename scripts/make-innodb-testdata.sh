#!/usr/bin/env bash
# Makes the real InnoDB tablespaces in testdata/innodb/ with throwaway MariaDB servers.
#
# Two throwaway servers are started on their own datadir and Unix socket, without TCP
# (--skip-networking: no port can clash with the main server or another run; the main
# server's data is never touched): one with 16K pages, one with innodb_page_size=8k. Each is
# stopped with every page flushed (innodb_fast_shutdown=1 or 0) and its datadir is removed.
# Tables: COMPACT, REDUNDANT, DYNAMIC, ROW_FORMAT=COMPRESSED and PAGE_COMPRESSED, a table
# without a primary key, a table with a BLOB, rows with known values of every type `dbio innodb
# grep` encodes, some rows deleted. full_crc32 tablespaces are made with the default
# innodb_checksum_algorithm=full_crc32, crc32 ones after SET GLOBAL
# innodb_checksum_algorithm=crc32 (dynamic: it applies to tablespaces created afterwards); one
# is rewritten with the legacy `innodb` checksum and read back by the server. The first pages
# of ibdata1 (the data dictionary) are kept too. A third server keeps tables in ibdata1
# (innodb_file_per_table=OFF): a live table and one dropped after its rows were written, the
# rows SELECT printed before the DROP saved beside them, for `innodb rows --dictionary`. A
# fourth server (innodb_read_only_compressed=OFF) makes the ROW_FORMAT=COMPRESSED tables
# shop_zip8/4/1 with their expected rows (make_zip below; --zip-only runs only it).
# Needs mariadb-server, the provider plugins mariadb-plugin-provider-{lz4,lzo,lzma,bzip2,snappy}
# and python3; about 20 s. Scratch files go under $SCRATCH (default /tmp).
#
# Usage: scripts/make-innodb-testdata.sh [--zip-only] [OUTDIR]   (default testdata/innodb)
#   --zip-only: only the ROW_FORMAT=COMPRESSED server (shop_zip*; needs no provider plugin).
set -euo pipefail
cd "$(dirname "$0")/.."
ZIP_ONLY=0
if [ "${1:-}" = "--zip-only" ]; then ZIP_ONLY=1; shift; fi
OUT=${1:-testdata/innodb}
mkdir -p "$OUT"
MARIADBD=${MARIADBD:-/usr/sbin/mariadbd}
WORK=$(mktemp -d "${SCRATCH:-/tmp}/dbio-innodb-mk.XXXXXX")
chmod 755 "$WORK"
pids=()
PROVIDERS=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  rm -rf "$WORK"
}
trap cleanup EXIT

start() { # name page_size [extra server options...]
  local name=$1 ps=$2 dir=$WORK/$1
  local extra=("${@:3}")
  mkdir -p "$dir/data"
  chown -R mysql:mysql "$dir" 2>/dev/null || true
  [ -d "$dir/data/mysql" ] ||
  mariadb-install-db --no-defaults --user=mysql --datadir="$dir/data" --auth-root-authentication-method=normal \
    --innodb-page-size="$ps" --innodb-data-file-path=ibdata1:12M:autoextend >"$dir/install.log" 2>&1 ||
    { echo "make-innodb-testdata: mariadb-install-db failed for $name:" >&2; cat "$dir/install.log" >&2; exit 1; }
  "$MARIADBD" --no-defaults --user=mysql --datadir="$dir/data" --socket="$dir/sock" \
    --skip-networking --innodb-page-size="$ps" \
    --innodb-data-file-path=ibdata1:12M:autoextend --innodb-buffer-pool-size=32M \
    --innodb-log-file-size=8M --skip-grant-tables --pid-file="$dir/pid" \
    --log-error="$dir/error.log" $PROVIDERS "${extra[@]}" &
  pids+=($!)
  for _ in $(seq 1 60); do
    mariadb --no-defaults -S "$dir/sock" -uroot -e 'select 1' >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "make-innodb-testdata: server $name did not start; see $dir/error.log" >&2
  cat "$dir/error.log" >&2
  exit 1
}
sql() { mariadb --no-defaults -S "$WORK/$1/sock" -uroot "${@:2}"; }
stop() { # name fast_shutdown
  sql "$1" -e "set global innodb_fast_shutdown=${2:-0}; shutdown"
  for _ in $(seq 1 60); do [ -e "$WORK/$1/pid" ] || return 0; sleep 0.5; done
  echo "make-innodb-testdata: server $1 did not stop in 30 s" >&2
  exit 1
}

# ---------------------------------------------------------------- ROW_FORMAT=COMPRESSED server
# One table per KEY_BLOCK_SIZE (8, 4, 1; 16K server, innodb_read_only_compressed=OFF, which
# MariaDB 10.6+ needs to write compressed tables) with the typed columns of shop_typed, a TEXT
# and rows at the edges of each type. ALTER TABLE ... FORCE rebuilds the table, which writes
# every page compressed with an empty modification log; the rows inserted and the row updated
# after it live only in the modification log of their page. The table with KEY_BLOCK_SIZE=8
# also has a TEXT of 40000 bytes (off page: a ZBLOB page and ZBLOB2 pages, one zlib stream)
# written before the rebuild and one of 12000 bytes written after it. A read view held open
# keeps the deleted rows delete-marked; the server's rows after the DELETE and the deleted rows
# before it are kept as shop_zipK.tsv and shop_zipK_deleted.tsv, the CREATE TABLE as
# shop_zipK.sql.
make_zip() {
  start sz 16k --innodb-read-only-compressed=OFF
  sql sz -e 'create database shop'
  for i in $(seq 1 35); do sql sz -e "create table shop.filler$i (a int); drop table shop.filler$i"; done
  sql sz -e 'start transaction with consistent snapshot; select sleep(120)' >/dev/null 2>&1 &
  pids+=($!)
  sleep 1
  for k in 8 4 1; do
    local t=zip$k n=60 big=0
    [ "$k" = 8 ] && big=1
    [ "$k" = 1 ] && n=20
    sql sz --default-character-set=utf8mb4 <<SQL
use shop;
set time_zone='+00:00';
create table $t (
  id int primary key,
  ti tinyint, si smallint, mi mediumint, bi bigint, iu int unsigned,
  d date, dt datetime, dt6 datetime(6), ts timestamp null, tm time,
  dec1 decimal(10,2), ch char(10), vc varchar(64), tx text
) row_format=compressed key_block_size=$k default charset=latin1;
insert into $t values
 (1, -5, 7, -100000, 9000000000000000001, 4000000000, '2019-05-13', '2019-05-13 14:35:07',
  '2019-05-13 14:35:07.123456', '2019-05-13 12:00:00', '-12:34:56', 1234.56, 'abc', 'Grüße aus Köln', 'short text'),
 (2, -128, -32768, -8388608, -9223372036854775808, 0, '1000-01-01', '1000-01-01 00:00:00',
  '1000-01-01 00:00:00.000001', '1970-01-01 00:00:01', '-838:59:59', -99999999.99, '', '', ''),
 (3, 127, 32767, 8388607, 9223372036854775807, 4294967295, '9999-12-31', '9999-12-31 23:59:59',
  '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07', '838:59:59', 99999999.99, 'zzzzzzzzzz',
  repeat('v', 64), if($big, (select group_concat(md5(seq) separator '') from seq_1_to_1250), 'no blob here')),
 (4, null, null, null, null, null, null, null, null, null, null, null, null, null, null);
insert into $t select s, s % 100 - 50, s * 7 - 300, s * 1001 - 50000, s * 123456789012 - 999,
  s * 3, '2001-01-01' + interval s day, '2001-01-01 10:00:00' + interval s * 3607 second,
  '2001-01-01 10:00:00.000001' + interval s * 1001 microsecond, '2001-01-01 00:00:00' + interval s hour,
  sec_to_time(s * 97 - 3000), s * 11.25 - 300, concat('c', s), concat('row ', s, ' grüße'),
  if(s % 5, null, repeat(char(64 + s % 26), s)) from (select cast(seq as signed) s from seq_10_to_$((n + 9))) q;
alter table $t force;
insert into $t values
 (5, 1, 2, 3, 4, 5, '2024-02-29', '2024-02-29 23:59:59', '2024-02-29 23:59:59.5', '2024-02-29 12:00:00',
  '00:00:01', 0.01, 'modlog', 'inserted after the page was compressed',
  if($big, (select group_concat(sha2(seq, 256) separator '') from seq_1_to_188), 'in the modification log')),
 ($((n + 10)), -1, -1, -1, -1, 1, '2000-01-01', '2000-01-01 00:00:00', '2000-01-01 00:00:00.000000', null,
  '-00:00:01', -0.01, 'last', 'last row, also after the compression', null);
update $t set vc = 'updated after the compression', si = -7 where id = 12;
SQL
    sql sz -B -N --default-character-set=utf8mb4 -e "set time_zone='+00:00'; select * from shop.$t where id in (1, 11, 13) order by id" |
      awk -F'\t' -v OFS='\t' '{ for (i = 1; i <= NF; i++) if ($i == "NULL") $i = "\\N"; print }' >"$WORK/keep/shop_${t}_deleted.tsv"
    sql sz -e "delete from shop.$t where id in (1, 11, 13)"
    sql sz -B -N --default-character-set=utf8mb4 -e "set time_zone='+00:00'; select * from shop.$t order by id" |
      awk -F'\t' -v OFS='\t' '{ for (i = 1; i <= NF; i++) if ($i == "NULL") $i = "\\N"; print }' >"$WORK/keep/shop_$t.tsv"
    sql sz -B -N -e "show create table shop.$t" | cut -f2 | sed 's/\\n/\n/g' >"$WORK/keep/shop_$t.sql"
  done
  sql sz -N -e "select name, space, flag from information_schema.innodb_sys_tablespaces where name like 'shop/%'" >&2
  stop sz 1
  for k in 8 4 1; do cp "$WORK/sz/data/shop/zip$k.ibd" "$WORK/keep/shop_zip$k.ibd"; done
}
mkdir -p "$WORK/keep"
if [ "$ZIP_ONLY" = 1 ]; then
  make_zip
  cp "$WORK"/keep/* "$OUT"/
  ls -l "$OUT"/shop_zip[0-9]* >&2
  exit 0
fi

# The page_compressed algorithms other than zlib come from MariaDB's provider plugins
# (Debian: mariadb-plugin-provider-lz4, -lzo, -lzma, -bzip2, -snappy).
ALGOS="lz4 lzo lzma bzip2 snappy"
PLUGIN_DIR=$("$MARIADBD" --no-defaults --verbose --help 2>/dev/null | awk '$1 == "plugin-dir" { print $2 }')
PROVIDERS=""
for a in $ALGOS; do
  [ -e "$PLUGIN_DIR/provider_$a.so" ] || {
    echo "make-innodb-testdata: $PLUGIN_DIR/provider_$a.so missing: apt-get install mariadb-plugin-provider-$a" >&2
    exit 1
  }
  PROVIDERS="$PROVIDERS --plugin-load-add=provider_$a"
done

# ---------------------------------------------------------------- 16K server
start s16 16k
# A read view held open from before the DELETEs keeps the deleted rows delete-marked (purge
# may not remove them); the server is then stopped with innodb_fast_shutdown=1, which flushes
# every page but does not finish purge.
sql s16 -e 'create database shop'
sql s16 -e 'start transaction with consistent snapshot; select sleep(120)' >/dev/null 2>&1 &
pids+=($!)
sleep 1
sql s16 <<'SQL'

use shop;
-- COMPACT, the row with INT 837492636, a deleted row
create table orders (id int primary key, qty smallint, note varchar(40)) row_format=compact;
insert into orders values (1,10,'first order'),(837492636,3,'the lost order'),(5,7,'to be deleted'),(6,1,'after it');
delete from orders where id=5;
-- REDUNDANT, four smallints 7,3,7,8 in one row
create table quad (a smallint, b smallint, c smallint, d smallint, primary key(a,b,c,d)) row_format=redundant;
insert into quad values (1,2,3,4),(7,3,7,8),(9,9,9,9),(7,3,1,1);
-- DYNAMIC, every type dbio encodes
create table typed (
  id int primary key,
  ti tinyint, si smallint, mi mediumint, bi bigint, iu int unsigned,
  d date, dt datetime, dt6 datetime(6), ts timestamp null, tm time,
  dec1 decimal(10,2), ch char(10), vc varchar(64)
) row_format=dynamic;
insert into typed values
 (1, -5, 7, -100000, 9000000000000000001, 4000000000, '2019-05-13', '2019-05-13 14:35:07',
  '2019-05-13 14:35:07.123456', '2019-05-13 12:00:00', '-12:34:56', 1234.56, 'abc', 'Grüße aus Köln'),
 (2, 5, 8, 100000, -9000000000000000001, 17, '2001-01-01', '2001-01-01 00:00:00',
  '2001-01-01 00:00:00.000001', '2001-01-01 00:00:00', '01:02:03', -1234.56, 'zzz', 'deleted varchar row');
delete from typed where id=2;
-- no primary key (DB_ROW_ID clustered index)
create table nopk (k int, v varchar(20)) row_format=dynamic;
insert into nopk values (42,'forty-two'),(43,'forty-three');
-- BLOB stored off page
create table blobs (id int primary key, b longblob) row_format=dynamic;
insert into blobs values (1, repeat('BLOBDATA', 4000));
-- ROW_FORMAT=COMPRESSED, 8K compressed pages in a 16K server (not full_crc32: MariaDB keeps
-- the older tablespace format for it)
create table zipped (id int primary key, v varchar(100)) row_format=compressed key_block_size=8;
insert into zipped values (1, 'zipped row one'), (777001, 'zipped target');
-- MariaDB page_compressed (full_crc32: compressed pages carry bit 15 of the page type)
create table packed (id int primary key, v varchar(200)) page_compressed=1;
insert into packed values (1, repeat('compressible ', 15)), (2, 'packed row two'), (424242, 'packed target');
SQL
# A dropped table: its tablespace is copied first (FLUSH TABLES ... FOR EXPORT makes it
# consistent on disk), as if read back from the device after DROP; the dictionary rows naming
# it stay delete-marked in ibdata1 (the read view above holds purge off).
mkdir -p "$WORK/keep"
sql s16 <<SQL
create table shop.gone (id int primary key, v varchar(20)) row_format=dynamic;
insert into shop.gone values (1, 'dropped row'), (31337, 'gone but found');
flush tables shop.gone for export;
system cp $WORK/s16/data/shop/gone.ibd $WORK/keep/shop_gone.ibd
unlock tables;
drop table shop.gone;
SQL
[ -s "$WORK/keep/shop_gone.ibd" ] || { echo "make-innodb-testdata: copying shop/gone.ibd failed" >&2; exit 1; }
sql s16 -e "set global innodb_checksum_algorithm=crc32"
sql s16 <<'SQL'
use shop;
create table legacy (id int primary key, v varchar(20)) row_format=compact;
insert into legacy values (1,'crc32 page'),(2,'second');
SQL
# Back to full_crc32 for the tables below.
sql s16 -e "set global innodb_checksum_algorithm=full_crc32"
# MariaDB 10.4+ instant DROP COLUMN and reorder: rows written before the DROP keep the
# dropped column, the root page's infimum/supremum are zeroed, and the metadata record
# references a BLOB with the order of the fields. The server's SELECT (and the CREATE TABLE
# after the last ALTER) are kept beside the tablespace: shop_dropcol.tsv, shop_dropcol.sql.
sql s16 <<'SQL'
use shop;
create table dropcol (id int primary key, a varchar(10), b int not null, c char(4), n int) row_format=dynamic;
insert into dropcol values (1,'one',10,'c1',100),(2,null,20,null,null);
alter table dropcol drop column b, algorithm=instant;
insert into dropcol values (3,'three','c3',300);
alter table dropcol add column z varchar(5) default 'zz', algorithm=instant;
insert into dropcol values (4,'four','c4',400,'z4');
alter table dropcol modify n int after id, algorithm=instant;
insert into dropcol values (5,500,'five','c5','z5'),(6,null,'','','');
SQL
keep_rows() { # table: the server's rows (NULL as \N) and its CREATE TABLE beside the .ibd
  sql s16 -B -N -e "set time_zone='+00:00'; select * from shop.$1 order by id" |
    awk -F'\t' -v OFS='\t' '{ for (i = 1; i <= NF; i++) if ($i == "NULL") $i = "\\N"; print }' >"$WORK/keep/shop_$1.tsv"
  sql s16 -B -N -e "show create table shop.$1" | cut -f2 | sed 's/\\n/\n/g' >"$WORK/keep/shop_$1.sql"
}
keep_rows dropcol
# The temporal formats before MySQL 5.6 (MariaDB 5.3's for fractional seconds), which MariaDB
# writes with mysql56_temporal_format=OFF: DATETIME 8 bytes, TIME 3, TIMESTAMP 4; SHOW CREATE
# TABLE marks them /* mariadb-5.3 */. In DYNAMIC (fixed lengths) and REDUNDANT (lengths stored).
sql s16 -e "set global mysql56_temporal_format=OFF"
for t in oldtime:dynamic oldtime_r:redundant; do
  sql s16 <<SQL
use shop;
create table ${t%%:*} (id int primary key, dt datetime, tm time, ts timestamp null, dt3 datetime(3),
  tm2 time(2), ts6 timestamp(6) null, dt6 datetime(6), tm6 time(6), tm5 time(5), dt5 datetime(5), d date)
  row_format=${t##*:};
set time_zone='+00:00';
insert into ${t%%:*} values
 (1, '2019-05-13 14:35:07', '-12:34:56', '2019-05-13 12:00:00', '2019-05-13 14:35:07.123', '-838:59:59.99',
  '2038-01-19 03:14:07.999999', '9999-12-31 23:59:59.999999', '-00:00:00.000001', '123:45:06.54321',
  '2001-02-03 04:05:06.78901', '2019-05-13'),
 (2, '0000-00-00 00:00:00', '00:00:00', '1970-01-01 00:00:01', '1000-01-01 00:00:00.001', '838:59:59',
  '1970-01-01 00:00:01.000001', '0000-00-00 00:00:00.000000', '12:00:00.5', '-00:00:01', '1000-01-01 00:00:00', '1000-01-01'),
 (3, null, null, null, null, null, null, null, null, null, null, null);
SQL
  keep_rows "${t%%:*}"
done
sql s16 -e "set global mysql56_temporal_format=ON"
# page_compressed with each provider algorithm (full_crc32: the algorithm is in the tablespace
# flags, chosen by innodb_compression_algorithm when the table is created).
for a in $ALGOS; do
  sql s16 -e "set global innodb_compression_algorithm=$a"
  sql s16 <<SQL
use shop;
create table packed_$a (id int primary key, v varchar(200)) page_compressed=1;
insert into packed_$a values (1, repeat('compressible $a ', 9)), (2, 'packed row two'), (3, null);
SQL
  keep_rows "packed_$a"
done
# page_compressed in a tablespace older than full_crc32 (what MariaDB before 10.5 made): page
# type 34354 with the algorithm of innodb_compression_algorithm when the page was written, no
# checksum. FLUSH TABLES ... FOR EXPORT writes the pages while bzip2 is set.
sql s16 -e "set global innodb_checksum_algorithm=crc32; set global innodb_compression_algorithm=bzip2"
sql s16 <<'SQL'
use shop;
create table packed_old (id int primary key, v varchar(200)) page_compressed=1;
insert into packed_old values (1, repeat('compressible old ', 9)), (2, 'packed row two'), (3, null);
flush tables packed_old for export;
unlock tables;
SQL
keep_rows packed_old
sql s16 -e "set global innodb_compression_algorithm=zlib; set global innodb_checksum_algorithm=full_crc32"
sql s16 -N -e "select name, space, flag from information_schema.innodb_sys_tablespaces where name like 'shop/%'" >"$WORK/s16.spaces"
stop s16 1
# Keep the files as they are now: the restart below would purge the delete-marked rows.
for t in orders quad typed nopk blobs packed zipped legacy dropcol oldtime oldtime_r; do cp "$WORK/s16/data/shop/$t.ibd" "$WORK/keep/shop_$t.ibd"; done
# Of each page_compressed table, page 0 (the FSP header) and page 3 (the compressed leaf)
# only, one after the other: the rows need no more.
for a in $ALGOS old; do
  { dd if="$WORK/s16/data/shop/packed_$a.ibd" bs=16k count=1 status=none
    dd if="$WORK/s16/data/shop/packed_$a.ibd" bs=16k skip=3 count=1 status=none; } >"$WORK/keep/shop_packed_$a.pages"
done
# ibdata1: the first 13 pages hold the FSP header, TRX_SYS, the dictionary header (page 7)
# and the SYS_TABLES/SYS_INDEXES B-trees of a fresh server.
dd if="$WORK/s16/data/ibdata1" of="$WORK/keep/ibdata1_16k_head" bs=16k count=13 status=none
# The legacy `innodb` checksum (fold-based), which MariaDB 10.11 still reads but no longer
# writes: rewrite shop/legacy.ibd with it, then let the real server read every row and CHECK
# the table, so the fixture is one MariaDB accepts.
python3 - "$WORK/s16/data/shop/legacy.ibd" <<'PY'
import sys
M, M2, MASK = 1463735687, 1653893711, (1 << 64) - 1
def fold(b):
    f = 0
    for x in b:
        f = (((((f ^ x ^ M2) << 8) & MASK) + f ^ M) + x) & MASK
    return f
path = sys.argv[1]
d = bytearray(open(path, "rb").read())
S = 16384
for i in range(len(d) // S):
    p = d[i * S:(i + 1) * S]
    if not any(p[16:24]):
        continue  # never written
    new = (fold(p[4:26]) + fold(p[38:S - 8])) & 0xFFFFFFFF
    p[0:4] = new.to_bytes(4, "big")
    old = fold(p[0:26]) & 0xFFFFFFFF
    p[S - 8:S - 4] = old.to_bytes(4, "big")
    d[i * S:(i + 1) * S] = p
open(path, "wb").write(d)
PY
start s16 16k
rows=$(sql s16 -N -e "select count(*) from shop.legacy; check table shop.legacy" | tr '\t\n' '  ')
case "$rows" in
  "2 shop.legacy check status OK "*) ;;
  *) echo "make-innodb-testdata: MariaDB did not accept the innodb checksums: $rows" >&2; cat "$WORK/s16/error.log" >&2; exit 1 ;;
esac
stop s16 1
make_zip
# ---------------------------------------------------------------- 8K server
start s8 8k
sql s8 -e 'create database small'
# move the space and index ids past those of the 16K server, so the two sets do not collide
for i in $(seq 1 15); do sql s8 -e "create table small.filler$i (a int); drop table small.filler$i"; done
sql s8 <<'SQL'
use small;
create table pages8 (id int primary key, v varchar(30)) row_format=dynamic;
insert into pages8 values (1,'eight k full_crc32'),(2,'second row');
SQL
sql s8 -e "set global innodb_checksum_algorithm=crc32"
sql s8 <<'SQL'
use small;
create table pages8c (id int primary key, v varchar(30)) row_format=compact;
insert into pages8c values (1,'eight k crc32'),(2,'second row');
SQL
stop s8
# ---------------------------------------------------------------- tables in ibdata1
# innodb_file_per_table=OFF: the tables' pages are in ibdata1 with the dictionary. The rows
# are flushed by a slow shutdown before the DROP (a page freed while dirty is never written);
# a read view held open keeps the dropped table's SYS_TABLES/SYS_COLUMNS/SYS_INDEXES/
# SYS_FIELDS rows delete-marked (not purged), and the last shutdown (innodb_fast_shutdown=1)
# does not purge either. The DROP frees the table's pages in ibdata1 but leaves their bytes.
start sd 16k --innodb-file-per-table=0
sql sd --default-character-set=utf8mb4 <<'SQL'
create database shop;
use shop;
-- every type the dictionary describes exactly, a BLOB longer than a page
create table kept (
  id int not null primary key, ti tinyint, su smallint unsigned, mi mediumint, bi bigint,
  f float, db double, y year, d date, dt datetime, dt6 datetime(6), ts timestamp(2) null, tm time(3),
  c char(10) character set latin1, cu char(5) character set utf8mb3,
  vu varchar(100) character set utf8mb4, bn binary(4), vb varbinary(20),
  tx text character set utf8mb4, bl blob
) default charset=latin1 row_format=dynamic;
insert into kept values
 (1, -128, 65535, -8388608, -9223372036854775808, 3.5, -2.718281828459045, 2155, '1000-01-01',
  '9999-12-31 23:59:59', '2019-05-13 14:35:07.123456', '2038-01-19 03:14:07.99', '-838:59:59.000',
  'abc', 'Grüß', 'utf8mb4 😀 Grüße', 0x00010203, 0xDEADBEEF, 'some text', 0x000102FF),
 (2, 127, 0, 8388607, 9223372036854775807, -0.5, 1e300, 1901, '2024-02-29',
  '2000-01-01 00:00:00', '2000-01-01 00:00:00.000001', '1970-01-01 00:00:01', '00:00:00.001',
  '', '', '', 0x61000000, '', repeat('Grüße ', 3000), unhex(repeat('00FF7F80', 6000))),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL);
-- the table to drop: COMPACT, with an ENUM and a DECIMAL the dictionary cannot describe
create table dropped_orders (
  id int not null primary key, qty smallint not null, note varchar(40) character set utf8mb4,
  status enum('new','paid','sent') not null, price decimal(10,2), created datetime
) default charset=latin1 row_format=compact;
insert into dropped_orders values
 (1, 10, 'first order', 'new', 19.99, '2024-01-02 03:04:05'),
 (837492636, 3, 'the lost order', 'paid', -1234.56, '2019-05-13 14:35:07'),
 (5, -7, 'Grüße', 'sent', NULL, NULL),
 (6, 1, NULL, 'paid', 0.01, '2000-02-29 00:00:00');
SQL
for t in kept dropped_orders; do
  sql sd -B -N --default-character-set=utf8mb4 -e "set time_zone='+00:00'; select * from shop.$t order by id" >"$WORK/keep/ibdata1_dict_$t.tsv"
done
sql sd -B -N -e "show create table shop.kept" | cut -f2 | sed 's/\\n/\n/g' >"$WORK/keep/ibdata1_dict_kept.sql"
stop sd 0
start sd 16k --innodb-file-per-table=0
sql sd -e 'start transaction with consistent snapshot; select sleep(120)' >/dev/null 2>&1 &
pids+=($!)
sleep 1
sql sd -e 'drop table shop.dropped_orders'
stop sd 1
# Keep the pages the tests need, in page order (each keeps its page number and checksum):
# the first 13 (FSP header, TRX_SYS, dictionary header, dictionary B-trees) and every INDEX
# and BLOB page of ibdata1. The undo logs, the doublewrite buffer and free pages stay out.
python3 - "$WORK/sd/data/ibdata1" "$WORK/keep/ibdata1_dict_pages" <<'PY'
import sys
S = 16384
d = open(sys.argv[1], "rb").read()
out = bytearray()
for i in range(len(d) // S):
    p = d[i * S:(i + 1) * S]
    t = int.from_bytes(p[24:26], "big")
    if i < 13 or t in (17855, 10):
        out += p
open(sys.argv[2], "wb").write(out)
PY
# The same dictionary after purge, as it is soon after a DROP on a server nobody holds a read
# view on: a restart without the read view, then a slow shutdown (innodb_fast_shutdown=0
# waits for purge). The dropped table's SYS_* rows are then on their pages' free lists with
# their headers kept and their data zeroed (MariaDB 10.6+ zeroes a record's data when purge
# frees it; page 10 shows it). Only the first 13 pages (the dictionary) are kept.
start sd 16k --innodb-file-per-table=0
stop sd 0
dd if="$WORK/sd/data/ibdata1" of="$WORK/keep/ibdata1_dict_purged_head" bs=16k count=13 status=none

cp "$WORK"/keep/* "$OUT"/
cp "$WORK/s16/data/shop/legacy.ibd" "$OUT/shop_legacy_innodb.ibd"
for t in pages8 pages8c; do cp "$WORK/s8/data/small/$t.ibd" "$OUT/small_$t.ibd"; done
cat "$WORK/s16.spaces" >&2
ls -l "$OUT" >&2
