#!/usr/bin/env bash
# Makes the MariaDB-encrypted tablespaces in testdata/innodb/ (`innodb pages --key-file`,
# `innodb rows --key-file`) with throwaway MariaDB servers and the file_key_management plugin.
#
# Each server runs on its own datadir and Unix socket under $SCRATCH (default /tmp), without
# TCP (--skip-networking), and is stopped with every page flushed (innodb_fast_shutdown=0);
# its datadir is removed. Two servers:
#   cbc: file_key_management_encryption_algorithm=AES_CBC, the plain key file enc_keys.txt
#        (`id;hexkey` lines). Tables: enc_full (default innodb_checksum_algorithm=full_crc32,
#        ENCRYPTION_KEY_ID=1) and enc_crc32 (made after SET GLOBAL innodb_checksum_algorithm=
#        crc32: the older page layout, key version and post-encryption checksum at 26..34,
#        ENCRYPTION_KEY_ID=2).
#   ctr: AES_CTR, the key file encrypted with a file key (enc_keys.enc, made with
#        `openssl enc -aes-256-cbc -md sha1 -pass pass:...`, as MariaDB's documentation says;
#        the password is in enc_keys.pass). Table enc_ctr (full_crc32, ENCRYPTION_KEY_ID=3).
# Every table: the same 400 rows (INT, VARCHAR, DATE, DECIMAL, TEXT; about 3 leaf pages).
# Kept: TABLE.ibd, TABLE.sql (SHOW CREATE TABLE), TABLE.tsv (SELECT ... ORDER BY id, NULL as
# \N), the key files. The keys are random each run, so a rerun replaces every file together.
#
# Usage: scripts/make-innodb-encrypted.sh [OUTDIR]   (default testdata/innodb)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-testdata/innodb}
mkdir -p "$OUT"
MARIADBD=${MARIADBD:-/usr/sbin/mariadbd}
WORK=$(mktemp -d "${SCRATCH:-/tmp}/dbio-innodb-enc.XXXXXX")
chmod 755 "$WORK"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/keep"

hexkey() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }
{
  echo "# dbio test keys (random, made by scripts/make-innodb-encrypted.sh)"
  echo "1;$(hexkey 32)"
  echo "2;$(hexkey 16)"
  echo "3;$(hexkey 32)"
} >"$WORK/keep/enc_keys.txt"
PASS=$(hexkey 12)
echo "$PASS" >"$WORK/keep/enc_keys.pass"
openssl enc -aes-256-cbc -md sha1 -pass pass:"$PASS" -in "$WORK/keep/enc_keys.txt" \
  -out "$WORK/keep/enc_keys.enc"
chmod 644 "$WORK"/keep/*

start() { # name [extra server options...]
  local name=$1 dir=$WORK/$1
  mkdir -p "$dir/data"
  chown -R mysql:mysql "$dir" 2>/dev/null || true
  mariadb-install-db --no-defaults --user=mysql --datadir="$dir/data" \
    --auth-root-authentication-method=normal >"$dir/install.log" 2>&1 ||
    { echo "make-innodb-encrypted: mariadb-install-db failed for $name:" >&2; cat "$dir/install.log" >&2; exit 1; }
  "$MARIADBD" --no-defaults --user=mysql --datadir="$dir/data" --socket="$dir/sock" \
    --skip-networking --innodb-buffer-pool-size=32M --innodb-log-file-size=8M \
    --skip-grant-tables --pid-file="$dir/pid" --log-error="$dir/error.log" \
    --plugin-load-add=file_key_management "${@:2}" &
  pids+=($!)
  for _ in $(seq 1 60); do
    mariadb --no-defaults -S "$dir/sock" -uroot -e 'select 1' >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "make-innodb-encrypted: server $name did not start; see $dir/error.log" >&2
  cat "$dir/error.log" >&2
  exit 1
}
sql() { mariadb --no-defaults -S "$WORK/$1/sock" -uroot "${@:2}"; }
stop() {
  sql "$1" -e "set global innodb_fast_shutdown=0; shutdown"
  for _ in $(seq 1 60); do [ -e "$WORK/$1/pid" ] || return 0; sleep 0.5; done
  echo "make-innodb-encrypted: server $1 did not stop in 30 s" >&2
  exit 1
}
table() { # server table key_id
  sql "$1" --default-character-set=utf8mb4 <<SQL
create database if not exists shop;
use shop;
create table $2 (
  id int primary key,
  name varchar(40) not null,
  born date,
  price decimal(10,2),
  note text
) engine=innodb default charset=utf8mb4 encrypted=yes encryption_key_id=$3;
insert into $2 select seq, concat('customer ', seq, ' Köln'), '2000-01-01' + interval seq day,
  seq * 1.25 - 100, if(seq % 7 = 0, null, repeat(char(65 + seq % 26), seq % 50))
  from seq_1_to_400;
delete from $2 where id in (13, 14);
SQL
  sql "$1" -B -N --default-character-set=utf8mb4 -e "select * from shop.$2 order by id" |
    awk -F'\t' -v OFS='\t' '{ for (i = 1; i <= NF; i++) if ($i == "NULL") $i = "\\N"; print }' >"$WORK/keep/$2.tsv"
  sql "$1" -B -N -e "show create table shop.$2" | cut -f2 | sed 's/\\n/\n/g' >"$WORK/keep/$2.sql"
}

start cbc --file-key-management-filename="$WORK/keep/enc_keys.txt" \
  --file-key-management-encryption-algorithm=AES_CBC
table cbc enc_full 1
sql cbc -e 'set global innodb_checksum_algorithm=crc32'
table cbc enc_crc32 2
stop cbc
cp "$WORK/cbc/data/shop/enc_full.ibd" "$WORK/cbc/data/shop/enc_crc32.ibd" "$WORK/keep/"

start ctr --file-key-management-filename="$WORK/keep/enc_keys.enc" \
  --file-key-management-filekey="$PASS" --file-key-management-encryption-algorithm=AES_CTR
table ctr enc_ctr 3
stop ctr
cp "$WORK/ctr/data/shop/enc_ctr.ibd" "$WORK/keep/"

chmod 644 "$WORK"/keep/*
cp "$WORK"/keep/* "$OUT"/
ls -l "$OUT"/enc_* >&2
