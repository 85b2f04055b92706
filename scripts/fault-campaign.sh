#!/usr/bin/env bash
# The fault campaign of `dbio mysql chunk` (issue 24, "Never lose a row"): hostile cases
# against an archive+delete job, each ending with the job resumed to its end and a check that
# the rows left in the table plus the rows in the archive are the original rows exactly (the
# same multiset of rows: none missing, none twice, none changed).
#
# It starts its own throwaway mariadbd (datadir, socket, error log under a temporary directory,
# TCP port PORT on 127.0.0.1, default 23350; the shared server on 3306 is never touched) and
# kills it at exit. It loads ROWS rows (an INT key; an INT k; a VARCHAR holding tabs, newlines,
# backslashes, quotes and non-ASCII text; a TEXT, a DECIMAL and a DATETIME(3), each NULL in
# some rows) and keeps every row's SHA1 (over QUOTE() of each column) as the original. Each case
# starts from a fresh copy of that table and runs
#   dbio mysql chunk --table t --where "k < 5" --archive FILE --delete --execute --state FILE
# (5 rows in 7 match). An archive is loaded back into a scratch table without keys: TSV with
# LOAD DATA (its header names the columns; a warning fails the check), SQL with the mariadb
# client. Each case prints one line:
#
#   case-name  PASS|FAIL  table=N archive=M original=K dup=D missing=X  (details)
#
# dup: rows present more often than in the original (by key); missing: original rows found
# neither in the table nor in the archive (by key); a row changed on its way shows in the
# details as "differ" (rows of the table + archive whose SHA1 is not the original's, plus
# originals not found). The cases:
#
#   clean-run              the job once, undisturbed (always run: it times the job for the others)
#   harness-selfcheck      the check above fed a corrupted copy of clean-run's archive (one
#                          row removed, one doubled, one changed): it must report exactly that
#   clean-run-sql          the job with --archive-format sql, the archive loaded back by the client
#   kill-dbio              KILLS x SIGKILL of dbio at random moments (of its progress), --resume
#   kill-server            SERVER_KILLS x SIGKILL of mariadbd, restart, --resume: every other kill
#                          0-3 ms after the checkpoint says a chunk is committing, the others
#                          at a random moment
#   archive-fs-full        the archive on a tmpfs a third of its final size; ENOSPC; space freed
#                          (remount bigger), --resume
#   state-fs-full          --state on a 64 KiB tmpfs filled up while the job runs; filler removed,
#                          --resume
#   frozen-server          mariadbd stopped (SIGSTOP) FREEZE seconds while the job runs. With
#                          --net-timeout (if `dbio mysql chunk --help` has it) dbio must give up or
#                          reconnect by itself; without it, it blocks for the whole freeze and a
#                          wrapper kills it (FAIL: against a server that never answers it would
#                          wait forever). Then SIGCONT, --resume
#   concurrent-same        CONCURRENT copies of the same job started at once (each its own
#                          --state and --archive): exactly one may archive rows
#   concurrent-localhost   the same, half of them with the DSN's host localhost for 127.0.0.1
#   concurrent-db.t        half of them with --table camp.t for --table t
#   concurrent-where-space half of them with a trailing space in --where
#   resume-other-archive   the job stopped (SIGINT), then --resume with --archive naming an
#                          unrelated existing file larger than the checkpoint's archive length:
#                          PASS only if dbio exits non-zero and the file is byte-identical
#   pending-reinsert       PENDING_ROUNDS x: dbio killed while its checkpoint holds a pending
#                          chunk that did commit (the state file polled, the kill delayed 0-20 ms,
#                          adapted), an application row inserted with that chunk's first key,
#                          --resume: the chunk's rows must stay archived and the application
#                          rows must survive (in the table, or archived). "not tested" when no
#                          kill lands in that window in PROBE_TRIES tries
#   cascade                a parent with ON DELETE CASCADE children: archive+delete of parents
#                          must be refused (no child row may vanish) unless --archive-children
#   cascade-archive-children  (only if the binary has --archive-children) the same with
#                          --archive-children --archive-format sql: children left + children in
#                          the archive files = the original children (and parents likewise)
#   generated-invisible    VIRTUAL and PERSISTENT generated columns and an INVISIBLE column,
#                          --archive-format sql, the archive replayed by the mariadb client into an
#                          empty copy of the table under the server's default sql_mode: it must
#                          restore every row identically
#
# Ends with "campaign: N cases, P passed, F failed"; exits 1 if any case failed. About 10
# minutes on 2 cores with the defaults, 2 with QUICK=1.
#
# Usage: scripts/fault-campaign.sh    (as root: it mounts tmpfs filesystems)
#   env: DBIO (default: cargo build --release -p dbio, target/release/dbio), QUICK=1, ROWS,
#        KILLS, SERVER_KILLS, FREEZE (s), NET_TIMEOUT (3s), CONCURRENT, PENDING_ROUNDS,
#        PROBE_TRIES, PORT,
#        SEED (for $RANDOM), CASES (names to run, space-separated), KEEP=1 (keep the work dir)
set -uo pipefail
cd "$(dirname "$0")/.."

QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
  ROWS=${ROWS:-50000}; KILLS=${KILLS:-10}; SERVER_KILLS=${SERVER_KILLS:-2}; FREEZE=${FREEZE:-5}
else
  ROWS=${ROWS:-300000}; KILLS=${KILLS:-60}; SERVER_KILLS=${SERVER_KILLS:-10}; FREEZE=${FREEZE:-8}
fi
CONCURRENT=${CONCURRENT:-4}
PROBE_TRIES=${PROBE_TRIES:-40}
PENDING_ROUNDS=${PENDING_ROUNDS:-$([ "$QUICK" = 1 ] && echo 1 || echo 3)}
NET_TIMEOUT=${NET_TIMEOUT:-3s}
PORT=${PORT:-23350}
SEED=${SEED:-$$}
CASES=${CASES:-}
KEEP=${KEEP:-0}
RANDOM=$SEED
WHERE="k < 5"

die() { echo "fault-campaign: $*" >&2; exit 2; }
say() { echo "fault-campaign: $*" >&2; }

[ "$(id -u)" = 0 ] || die "run it as root: it mounts small tmpfs filesystems for the full-filesystem cases"
[ "$PORT" != 3306 ] || die "PORT 3306 is the shared server's: choose another port"

# command -> Debian package; installed (announced) only when missing.
declare -A NEED=([mariadb]=mariadb-client [mariadbd]=mariadb-server [mariadb-install-db]=mariadb-server
  [perl]=perl [mount]=mount [sha256sum]=coreutils)
missing=()
for cmd in "${!NEED[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing+=("${NEED[$cmd]}")
done
perl -MTime::HiRes -e 1 2>/dev/null || missing+=(perl)
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || die "missing packages ${missing[*]} and no apt-get to install them"
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null ||
    die "apt-get install ${missing[*]} failed"
fi
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)

if [ -z "${DBIO:-}" ]; then
  say "building target/release/dbio (cargo build --release -p dbio)"
  cargo build --release -p dbio >&2 || die "cargo build --release -p dbio failed"
  DBIO=target/release/dbio
fi
[ -x "$DBIO" ] || die "DBIO=$DBIO is not an executable"
DBIO=$(realpath "$DBIO")
HELP=$("$DBIO" mysql chunk --help 2>&1) || die "$DBIO mysql chunk --help failed: $HELP"
has_flag() { grep -q -- "$1\b" <<<"$HELP"; }

# Everything under one directory (in /dev/shm when there is one: a kill -9 of the server loses
# nothing there either, and fsync costs nothing, so the cases take seconds).
BASE=/tmp
[ -d /dev/shm ] && BASE=/dev/shm
WORK=$(mktemp -d "$BASE/fault-campaign.XXXXXX")
SOCK=$WORK/mariadbd.sock
SPID=
BG=()
MOUNTS=()
# Whether a pid is a live child of this script (a pid we started, not reused by another
# process since): only those are ever signalled.
ours() { [ -n "$1" ] && [ "$(awk '{ print $4 }' "/proc/$1/stat" 2>/dev/null)" = "$$" ]; }
cleanup() {
  local p m
  for p in "${BG[@]}"; do ours "$p" && kill -9 "$p" 2>/dev/null; done
  if ours "$SPID"; then
    kill -CONT "$SPID" 2>/dev/null
    kill -9 "$SPID" 2>/dev/null
    wait "$SPID" 2>/dev/null
  fi
  for m in "${MOUNTS[@]}"; do umount -l "$m" 2>/dev/null; done
  if [ "$KEEP" = 1 ]; then say "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

sql() { mariadb --protocol=tcp -h127.0.0.1 -P"$PORT" -uroot -N -B --local-infile=1 --default-character-set=utf8mb4 "$@"; }
up() { sql -e 'SELECT 1' >/dev/null 2>&1; }

server_start() {
  "$MARIADBD" --no-defaults --user=root --datadir="$WORK/data" --socket="$SOCK" \
    --pid-file="$WORK/mariadbd.pid" --tmpdir="$WORK/tmp" --log-error="$WORK/mariadbd.err" \
    --port="$PORT" --bind-address=127.0.0.1 --skip-name-resolve --local-infile=1 \
    --innodb-buffer-pool-size=256M --innodb-log-file-size=64M --max-connections=200 \
    </dev/null >/dev/null 2>&1 &
  SPID=$!
  local i
  for ((i = 0; i < 900; i++)); do
    up && return 0
    kill -0 "$SPID" 2>/dev/null || break
    sleep 0.1
  done
  tail -20 "$WORK/mariadbd.err" >&2
  die "mariadbd did not start on port $PORT (error log above)"
}
server_kill() { ours "$SPID" && kill -9 "$SPID"; wait "$SPID" 2>/dev/null; SPID=; }

up && die "something already answers on 127.0.0.1:$PORT: choose another PORT"
mkdir -p "$WORK/tmp" "$WORK/cases"
mariadb-install-db --no-defaults --user=root --datadir="$WORK/data" \
  --auth-root-authentication-method=normal --skip-test-db >"$WORK/install-db.log" 2>&1 ||
  { cat "$WORK/install-db.log" >&2; die "mariadb-install-db failed"; }
server_start
say "mariadbd $("$MARIADBD" --version | awk '{print $3}') on 127.0.0.1:$PORT (datadir $WORK/data); dbio $DBIO; seed $SEED"

# The original: ROWS rows and their SHA1s (camp_ref.h: id, h).
HX_T="UNHEX(SHA1(CONCAT_WS('|', id, k, QUOTE(name), QUOTE(note), QUOTE(amount), QUOTE(created))))"
say "loading $ROWS rows into camp_ref.t"
sql -e "
  CREATE DATABASE camp_ref;
  CREATE TABLE camp_ref.t (id INT NOT NULL PRIMARY KEY, k INT NOT NULL,
    name VARCHAR(64) CHARACTER SET utf8mb4 NOT NULL, note TEXT CHARACTER SET utf8mb4 NULL,
    amount DECIMAL(12,2) NULL, created DATETIME(3) NULL) ENGINE=InnoDB;
  INSERT INTO camp_ref.t
    SELECT seq, seq % 7,
      CONCAT('row-', seq, IF(seq % 11 = 0, '\ttab', ''), IF(seq % 13 = 0, '\nnewline', ''),
        IF(seq % 17 = 0, '\\\\back', ''), IF(seq % 19 = 0, ' é€😀', ''), IF(seq % 23 = 0, ' it''s \"q\"', '')),
      IF(seq % 5 = 0, NULL, REPEAT(CONCAT('n', seq % 97, ' '), 1 + seq % 6)),
      IF(seq % 9 = 0, NULL, (seq * 37 % 100000) / 100 - 300),
      IF(seq % 4 = 0, NULL, TIMESTAMP'2020-01-01 00:00:00' + INTERVAL seq * 61 SECOND
        + INTERVAL (seq % 1000) * 1000 MICROSECOND)
    FROM camp_ref.seq_1_to_$ROWS;
  CREATE TABLE camp_ref.h (id BIGINT NOT NULL, h BINARY(20) NOT NULL, KEY (id), KEY (h)) ENGINE=InnoDB;
  INSERT INTO camp_ref.h SELECT id, $HX_T FROM camp_ref.t;" || die "cannot load the original table"

DSN="mysql://root@127.0.0.1:$PORT/camp"
THROTTLE=(--chunk-size 500 --chunk-min 100 --chunk-max 2000 --chunk-time 20ms --sleep-coef 2
  --max-load Threads_running=1000 --critical-load Threads_running=2000)
JOB=(mysql chunk --dsn "$DSN" --table t --where "$WHERE" --delete --execute "${THROTTLE[@]}")

# ---- helpers -------------------------------------------------------------------------------

NOTES=
note() { NOTES+="${NOTES:+; }$*"; }
ms() { date +%s%3N; }
rand() { echo $(($1 + RANDOM % ($2 - $1 + 1))); }
sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }
first_error() { grep -m1 '^ERROR' <<<"$1" | cut -c1-220; }
last_err() { grep -v '^\[exit\|^+ ' "$1" | grep -i 'error\|dbio:' | tail -1 | cut -c1-220; }

fresh_t() {
  sql -e "DROP DATABASE IF EXISTS camp; CREATE DATABASE camp;
    CREATE TABLE camp.t LIKE camp_ref.t; INSERT INTO camp.t SELECT * FROM camp_ref.t" ||
    die "cannot copy the original table"
}

new_case() { # name: a fresh case directory, no notes
  CASE=$1
  CD=$WORK/cases/$1
  mkdir -p "$CD"
  NOTES=
  V_N=- V_M=- V_K=- V_DUP=- V_MISS=- V_DIFF=0
  say "case $1"
}

chunks_done() { local n; n=$(json_num chunks "$1" 2>/dev/null); echo "${n:-0}"; }
wait_chunks() { # state pid n: waits (up to 120 s) until the checkpoint counts n chunks; 1 if the
  #             pid ended first
  local i
  for ((i = 0; i < 12000; i++)); do
    [ "$(chunks_done "$1")" -ge "$3" ] && return 0
    gone "$2" && return 1
    sleep 0.01
  done
  return 1
}
finished() { [ -e "$1" ] && grep -q '"finished": *true' "$1"; }
json_num() { sed -n "s/.*\"$1\": *\([0-9][0-9]*\).*/\1/p" "$2" | head -1; }
data_rows() { # rows in a TSV archive (lines after the header)
  if [ -e "$1" ]; then awk 'END { print (NR > 0 ? NR - 1 : 0) }' "$1"; else echo 0; fi
}

run_dbio() { # log args...: runs dbio in the foreground, its output to log; returns its exit code
  local log=$1 rc
  shift
  echo "+ dbio $*" >>"$log"
  "$DBIO" "$@" >>"$log" 2>&1
  rc=$?
  echo "[exit $rc]" >>"$log"
  return $rc
}
bg_dbio() { # log args...: starts dbio in the background; BGPID
  local log=$1
  shift
  echo "+ dbio $* &" >>"$log"
  "$DBIO" "$@" >>"$log" 2>&1 &
  BGPID=$!
  BG+=("$BGPID")
}
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = Z ]; }
wait_gone() { # pid seconds: 0 when the pid has exited within that time
  local n=$(($2 * 10))
  while ! gone "$1"; do
    ((n-- > 0)) || return 1
    sleep 0.1
  done
}
reap() { # pid log: waits for a background dbio, logs and returns its exit code
  local rc
  wait "$1" 2>/dev/null # (no "Killed" line from bash)
  rc=$?
  echo "[exit $rc]" >>"$2"
  return $rc
}

# MODE: (--resume) when the job's checkpoint exists, () for a first start. A dbio killed after
# creating its archive and before its first checkpoint leaves an archive without a checkpoint:
# with only its header line it is removed (as a user would: it holds no row), noted.
next_mode() { # state archive
  MODE=()
  if [ -e "$1" ]; then
    MODE=(--resume)
  elif [ -n "$2" ] && [ -e "$2" ]; then
    if [ "$(wc -l <"$2")" -le 1 ]; then
      note "an archive was left without a checkpoint (header only; removed to start again)"
      rm -f "$2"
    fi
  fi
}

finish() { # log state archive args...: runs the job (--resume once it has a checkpoint) until
  #          its checkpoint says finished; 1 if it does not get there in 30 runs
  local log=$1 st=$2 ar=$3 i
  shift 3
  for ((i = 0; i < 30; i++)); do
    finished "$st" && return 0
    next_mode "$st" "$ar"
    run_dbio "$log" "$@" "${MODE[@]}" || sleep 0.5
  done
  finished "$st" && return 0
  note "the job did not finish in 30 runs: $(last_err "$log")"
  return 1
}

# Loads one archive into the scratch table `scratch` (made by the caller): TSV by LOAD DATA
# with the header's column list, SQL by the mariadb client with the INSERTs of `table`
# redirected to the scratch table. Problems go to the notes (and fail the check).
LOAD_BAD=0
load_archive() { # file table scratch
  local f=$1 table=$2 scratch=$3 out cols
  [ -s "$f" ] || return 0
  if head -c 2 "$f" | grep -q -- '--'; then
    out=$(sed -E "s/^INSERT INTO (\`camp\`\.)?\`$table\` /INSERT INTO \`camp\`.\`$scratch\` /" "$f" |
      sql camp 2>&1) || { note "$(basename "$f"): the mariadb client failed: $(first_error "$out")"; LOAD_BAD=1; }
  else
    cols=$(head -1 "$f" | awk -F'\t' '{ for (i = 1; i <= NF; i++) printf "%s`%s`", (i > 1 ? "," : ""), $i }')
    # Its warnings (up to max_error_count), one line each: any fails the check.
    out=$(sql camp -e "LOAD DATA LOCAL INFILE '$f' INTO TABLE \`$scratch\` CHARACTER SET utf8mb4
      IGNORE 1 LINES ($cols); SHOW WARNINGS" 2>&1) ||
      { note "$(basename "$f"): LOAD DATA failed: ${out:0:200}"; LOAD_BAD=1; return 0; }
    if [ -n "$out" ]; then
      note "$(basename "$f"): LOAD DATA gave $(wc -l <<<"$out") warning(s), the first: $(head -1 <<<"$out" | cut -c1-160)"
      LOAD_BAD=1
    fi
  fi
}

# Compares `table` + `scratch` with the expected rows (EXP: id, h) using the row hash HX; sets
# V_N V_M V_K V_DUP V_MISS V_DIFF; 0 when they are the same multiset of rows.
compare() { # table scratch exp hx
  local t=$1 s=$2 exp=$3 hx=$4 r
  r=$(sql camp -e "
    DROP TABLE IF EXISTS got;
    CREATE TABLE got (id BIGINT NOT NULL, h BINARY(20) NOT NULL, KEY (id), KEY (h)) ENGINE=InnoDB;
    INSERT INTO got SELECT id, $hx FROM \`$t\`;
    INSERT INTO got SELECT id, $hx FROM \`$s\`;
    SELECT (SELECT COUNT(*) FROM \`$t\`), (SELECT COUNT(*) FROM \`$s\`), (SELECT COUNT(*) FROM $exp),
      (SELECT COALESCE(SUM(IF(n > 0, n, 0)), 0) FROM (SELECT id, SUM(w) n FROM
        (SELECT id, 1 w FROM got UNION ALL SELECT id, -1 FROM $exp) u GROUP BY id) a),
      (SELECT COALESCE(SUM(IF(n < 0, -n, 0)), 0) FROM (SELECT id, SUM(w) n FROM
        (SELECT id, 1 w FROM got UNION ALL SELECT id, -1 FROM $exp) u GROUP BY id) b),
      (SELECT COALESCE(SUM(ABS(n)), 0) FROM (SELECT h, SUM(w) n FROM
        (SELECT h, 1 w FROM got UNION ALL SELECT h, -1 FROM $exp) u GROUP BY h) c)" 2>&1)
  if ! read -r V_N V_M V_K V_DUP V_MISS V_DIFF <<<"$r" || [ -z "$V_DIFF" ]; then
    note "the check's query failed: ${r:0:200}"
    V_N=- V_M=- V_K=- V_DUP=- V_MISS=- V_DIFF=-
    return 1
  fi
  [ "$V_DIFF" != 0 ] && note "differ=$V_DIFF"
  [ "$LOAD_BAD" = 0 ] && [ "$V_DUP" = 0 ] && [ "$V_MISS" = 0 ] && [ "$V_DIFF" = 0 ]
}

verify_t() { # exp archive...: table camp.t + the archives against exp
  local exp=$1 f
  shift
  LOAD_BAD=0
  sql camp -e "DROP TABLE IF EXISTS arch; CREATE TABLE arch AS SELECT * FROM camp_ref.t LIMIT 0"
  for f in "$@"; do load_archive "$f" t arch; done
  compare t arch "$exp" "$HX_T"
}

PASSED=0 FAILED=0 SKIPPED=0
report() { # verdict details
  printf '%-24s %s  table=%s archive=%s original=%s dup=%s missing=%s  (%s)\n' \
    "$CASE" "$1" "$V_N" "$V_M" "$V_K" "$V_DUP" "$V_MISS" "$2"
  case $1 in
    PASS) PASSED=$((PASSED + 1)) ;;
    FAIL) FAILED=$((FAILED + 1)) ;;
    *) SKIPPED=$((SKIPPED + 1)) ;;
  esac
}
verdict() { # ok(0/1) details: PASS when ok = 0
  local details=$2
  [ -n "$NOTES" ] && details+="; $NOTES"
  if [ "$1" = 0 ]; then report PASS "$details"; else report FAIL "$details"; fi
}
wanted() { [ -z "$CASES" ] || [[ " $CASES " == *" $1 "* ]]; }

mount_tmpfs() { # dir size
  mkdir -p "$1"
  mount -t tmpfs -o "size=$2,mode=0755" fault-campaign "$1" || die "cannot mount a tmpfs on $1"
  MOUNTS+=("$1")
}
unmount() { umount "$1" 2>/dev/null || umount -l "$1"; }

# ---- the cases -----------------------------------------------------------------------------

JOB_MS=8000      # the undisturbed job's time and chunks; measured by clean-run
JOB_CHUNKS=100
ARCHIVE_BYTES=$((ROWS * 60))

case_clean_run() {
  new_case clean-run
  fresh_t
  local A=$CD/archive.tsv S=$CD/state.json t0 rc ok=0
  t0=$(ms)
  run_dbio "$CD/log" "${JOB[@]}" --archive "$A" --state "$S"
  rc=$?
  JOB_MS=$(($(ms) - t0))
  JOB_CHUNKS=$(json_num chunks "$S")
  JOB_CHUNKS=${JOB_CHUNKS:-100}
  [ "$rc" = 0 ] && finished "$S" || { ok=1; note "one undisturbed run: exit $rc, $(last_err "$CD/log")"; }
  ARCHIVE_BYTES=$(stat -c %s "$A" 2>/dev/null || echo "$ARCHIVE_BYTES")
  verify_t camp_ref.h "$A" || ok=1
  verdict "$ok" "one run, exit $rc, ${JOB_MS} ms, $JOB_CHUNKS chunks, $(data_rows "$A") rows archived, $ARCHIVE_BYTES bytes"

  # The check itself: clean-run's archive with its first data row removed, the second doubled
  # and a character of the third's name changed must give dup=1 missing=1 differ=4.
  new_case harness-selfcheck
  awk 'NR == 2 { next } NR == 3 { print } NR == 4 { sub(/row-/, "rOw-") } { print }' "$A" >"$CD/corrupted.tsv"
  if verify_t camp_ref.h "$CD/corrupted.tsv"; then
    report FAIL "the check passed a corrupted archive (one row removed, one doubled, one changed)"
  elif [ "$V_DUP" = 1 ] && [ "$V_MISS" = 1 ] && [ "$V_DIFF" = 4 ]; then
    report PASS "a corrupted archive (one row removed, one doubled, one changed) is caught: $NOTES"
  else
    report FAIL "a corrupted archive gave other counts than dup=1 missing=1 differ=4: ${NOTES:-no note}"
  fi
}

case_clean_run_sql() {
  new_case clean-run-sql
  fresh_t
  local A=$CD/archive.sql S=$CD/state.json rc ok=0
  run_dbio "$CD/log" "${JOB[@]}" --archive "$A" --archive-format sql --state "$S"
  rc=$?
  [ "$rc" = 0 ] && finished "$S" || { ok=1; note "exit $rc: $(last_err "$CD/log")"; }
  verify_t camp_ref.h "$A" || ok=1
  verdict "$ok" "one run with --archive-format sql, exit $rc, archive replayed by the mariadb client"
}

case_kill_dbio() {
  new_case kill-dbio
  fresh_t
  local A=$CD/archive.tsv S=$CD/state.json i rc kills=0 ok=0 step target
  local args=("${JOB[@]}" --archive "$A" --state "$S")
  # Kills follow the job's progress, not the clock (the machine's load changes the job's
  # speed): each run is killed a random 0..2*step chunks after its start (0: while it starts),
  # then a random 0..40 ms later (in a SELECT, the archive's fsync, the DELETE, the COMMIT, a
  # checkpoint or a sleep), step spreading the kills over about 80% of the job.
  step=$((JOB_CHUNKS * 8 / 10 / KILLS))
  [ "$step" -ge 1 ] || step=1
  for ((i = 0; i < KILLS; i++)); do
    finished "$S" && break
    next_mode "$S" "$A"
    target=$(($(chunks_done "$S") + $(rand 0 $((2 * step)))))
    bg_dbio "$CD/log" "${args[@]}" "${MODE[@]}"
    wait_chunks "$S" "$BGPID" "$target"
    sleep_ms "$(rand 0 40)"
    ours "$BGPID" && kill -9 "$BGPID"
    reap "$BGPID" "$CD/log"
    rc=$?
    [ "$rc" = 137 ] && kills=$((kills + 1))
  done
  finish "$CD/log" "$S" "$A" "${args[@]}" || ok=1
  verify_t camp_ref.h "$A" || ok=1
  verdict "$ok" "$kills SIGKILLs of dbio landed (of $KILLS; each 0..$((2 * step)) chunks + 0..40 ms into a run), then --resume to the end"
}

case_kill_server() {
  new_case kill-server
  fresh_t
  local A=$CD/archive.tsv S=$CD/state.json i kills=0 ok=0 t0 how prc run=
  local args=("${JOB[@]}" --archive "$A" --state "$S")
  # Odd kills: the moment the checkpoint says a chunk is committing (between the checkpoint
  # written before COMMIT and the one after it), 0-3 ms late; even kills: a random moment.
  # A dbio that reconnects by itself (--reconnect-for) is left running across the restart and
  # is the one whose server is killed next.
  for ((i = 0; i < SERVER_KILLS; i++)); do
    finished "$S" && break
    if [ -z "$run" ]; then
      next_mode "$S" "$A"
      bg_dbio "$CD/log" "${args[@]}" "${MODE[@]}"
      run=$BGPID
    fi
    prc=1
    if [ $((i % 2)) = 0 ]; then
      how="at a pending COMMIT"
      if wait_chunks "$S" "$run" $(($(chunks_done "$S") + $(rand 0 $((JOB_CHUNKS / (SERVER_KILLS + 1)))))); then
        { perl -e "$POLLER" "$S" "$SPID" "$$" "$(rand 0 3000)" 60 2>>"$CD/poller.err"; } 2>/dev/null
        prc=$?
      fi
      if [ "$prc" = 0 ]; then
        wait "$SPID" 2>/dev/null
        SPID=
      fi
    else
      how="at a random moment"
      wait_chunks "$S" "$run" $(($(chunks_done "$S") + $(rand 0 $((JOB_CHUNKS / (SERVER_KILLS + 1))))))
      sleep_ms "$(rand 0 40)"
      gone "$run" || { server_kill; prc=0; }
    fi
    if [ "$prc" != 0 ]; then # the job ended before the kill
      reap "$run" "$CD/log"
      run=
      continue
    fi
    kills=$((kills + 1))
    t0=$(ms)
    if wait_gone "$run" 5; then
      reap "$run" "$CD/log"
      note "kill $kills $how: dbio exit $? after $(($(ms) - t0)) ms"
      run=
      server_start
    else
      server_start
      note "kill $kills $how: dbio still ran after 5 s (reconnecting), server restarted"
    fi
  done
  [ -z "$SPID" ] && server_start
  if [ -n "$run" ]; then
    if wait_gone "$run" 300; then
      reap "$run" "$CD/log"
      note "the reconnecting dbio ended by itself: exit $?"
    else
      ours "$run" && kill -9 "$run"
      reap "$run" "$CD/log"
      ok=1
      note "a reconnecting dbio still ran 300 s after its server came back (killed)"
    fi
  fi
  finish "$CD/log" "$S" "$A" "${args[@]}" || ok=1
  verify_t camp_ref.h "$A" || ok=1
  verdict "$ok" "$kills SIGKILLs of mariadbd during the job, restart, --resume"
}

case_archive_fs_full() {
  new_case archive-fs-full
  fresh_t
  local fs=$CD/afs size rc ok=0
  size=$((ARCHIVE_BYTES / 3 / 1024 + 4))k
  mount_tmpfs "$fs" "$size"
  local A=$fs/archive.tsv S=$CD/state.json
  local args=("${JOB[@]}" --archive "$A" --state "$S")
  run_dbio "$CD/log" "${args[@]}"
  rc=$?
  if [ "$rc" = 0 ]; then
    ok=1
    note "dbio exited 0 with its archive on a full $size filesystem"
  else
    note "first run: exit $rc at $(stat -c %s "$A" 2>/dev/null) bytes: $(last_err "$CD/log")"
  fi
  mount -o remount,size=1g "$fs" || die "cannot grow the tmpfs $fs"
  finish "$CD/log" "$S" "$A" "${args[@]}" || ok=1
  verify_t camp_ref.h "$A" || ok=1
  verdict "$ok" "archive on a $size tmpfs, then grown to 1g, --resume"
  unmount "$fs"
}

case_state_fs_full() {
  new_case state-fs-full
  fresh_t
  local fs=$CD/sfs rc ok=0
  mount_tmpfs "$fs" 64k
  local A=$CD/archive.tsv S=$fs/state.json
  local args=("${JOB[@]}" --archive "$A" --state "$S")
  bg_dbio "$CD/log" "${args[@]}"
  wait_chunks "$S" "$BGPID" "$(rand $((JOB_CHUNKS / 6)) $((JOB_CHUNKS / 3)))"
  dd if=/dev/zero of="$fs/filler" bs=4k 2>/dev/null
  if ! wait_gone "$BGPID" 60; then
    note "dbio went on 60 s with its state filesystem full (killed)"
    ours "$BGPID" && kill -9 "$BGPID"
    ok=1
  fi
  reap "$BGPID" "$CD/log"
  rc=$?
  if [ "$rc" = 0 ]; then
    finished "$S" && note "the job finished before the filesystem filled (timing)" ||
      { ok=1; note "dbio exited 0 with its state filesystem full"; }
  else
    note "exit $rc with the state filesystem full: $(last_err "$CD/log")"
  fi
  rm -f "$fs/filler"
  finish "$CD/log" "$S" "$A" "${args[@]}" || ok=1
  verify_t camp_ref.h "$A" || ok=1
  verdict "$ok" "--state on a 64k tmpfs filled while the job ran, filler removed, --resume"
  unmount "$fs"
}

case_frozen_server() {
  new_case frozen-server
  fresh_t
  local A=$CD/archive.tsv S=$CD/state.json ok=0 t0 took rc extra=() how
  if has_flag --net-timeout; then
    extra=(--net-timeout "$NET_TIMEOUT")
    how="--net-timeout $NET_TIMEOUT"
  else
    how="no --net-timeout in this dbio"
  fi
  local args=("${JOB[@]}" --archive "$A" --state "$S" "${extra[@]}")
  bg_dbio "$CD/log" "${args[@]}"
  if ! wait_chunks "$S" "$BGPID" "$(rand 2 $((JOB_CHUNKS / 3 + 2)))"; then
    reap "$BGPID" "$CD/log"
    rc=$?
    [ "$rc" = 0 ] || ok=1
    note "dbio ended before the freeze: exit $rc: $(last_err "$CD/log")"
  else
    sleep_ms "$(rand 0 40)"
    kill -STOP "$SPID"
    t0=$(ms)
    if wait_gone "$BGPID" "$FREEZE"; then
      took=$(($(ms) - t0))
      kill -CONT "$SPID"
      reap "$BGPID" "$CD/log"
      rc=$?
      note "dbio gave up by itself ${took} ms into the freeze: exit $rc, $(last_err "$CD/log")"
    else
      kill -CONT "$SPID"
      if [ ${#extra[@]} -gt 0 ]; then
        # It may be reconnecting: give it time to end by itself after the server is back.
        if wait_gone "$BGPID" 120; then
          reap "$BGPID" "$CD/log"
          rc=$?
          note "dbio outlived the ${FREEZE} s freeze and ended by itself after it: exit $rc"
        else
          ours "$BGPID" && kill -9 "$BGPID"
          reap "$BGPID" "$CD/log"
          ok=1
          note "dbio still ran 120 s after the freeze ended (killed)"
        fi
      else
        ours "$BGPID" && kill -9 "$BGPID"
        reap "$BGPID" "$CD/log"
        ok=1
        note "dbio sat blocked for the whole ${FREEZE} s freeze with no way to time out (a server that never answers again would hold it forever): killed by the wrapper"
      fi
    fi
  fi
  finish "$CD/log" "$S" "$A" "${args[@]}" || ok=1
  verify_t camp_ref.h "$A" || ok=1
  verdict "$ok" "mariadbd SIGSTOPped ${FREEZE} s during the job ($how), SIGCONT, --resume"
}

case_concurrent() { # name variant-kind (same|localhost|db.t|where-space)
  new_case "$1"
  fresh_t
  local kind=$2 j ok=0 dsn table where ran=0 exits= rows= n
  local -a pids=() archives=() states=()
  for ((j = 0; j < CONCURRENT; j++)); do
    dsn=$DSN table=t where=$WHERE
    if [ $((j % 2)) = 1 ]; then
      case $kind in
        localhost) dsn="mysql://root@localhost:$PORT/camp" ;;
        db.t) table=camp.t ;;
        where-space) where="$WHERE " ;;
      esac
    fi
    archives+=("$CD/archive-$j.tsv")
    states+=("$CD/state-$j.json")
    bg_dbio "$CD/log-$j" mysql chunk --dsn "$dsn" --table "$table" --where "$where" --delete \
      --execute "${THROTTLE[@]}" --archive "$CD/archive-$j.tsv" --state "$CD/state-$j.json"
    pids+=("$BGPID")
  done
  for ((j = 0; j < CONCURRENT; j++)); do
    if ! wait_gone "${pids[$j]}" 300; then ours "${pids[$j]}" && kill -9 "${pids[$j]}"; note "job $j still ran after 300 s (killed)"; fi
    reap "${pids[$j]}" "$CD/log-$j"
    exits+="${exits:+,}$?"
  done
  # A job that started and failed (not a refusal) is resumed to its end.
  for ((j = 0; j < CONCURRENT; j++)); do
    if [ -e "${states[$j]}" ] && ! finished "${states[$j]}"; then
      note "job $j stopped unfinished: $(last_err "$CD/log-$j")"
      dsn=$DSN table=t where=$WHERE
      if [ $((j % 2)) = 1 ]; then
        case $kind in
          localhost) dsn="mysql://root@localhost:$PORT/camp" ;;
          db.t) table=camp.t ;;
          where-space) where="$WHERE " ;;
        esac
      fi
      finish "$CD/log-$j" "${states[$j]}" "${archives[$j]}" mysql chunk --dsn "$dsn" --table "$table" \
        --where "$where" --delete --execute "${THROTTLE[@]}" --archive "${archives[$j]}" --state "${states[$j]}" || ok=1
    fi
  done
  for ((j = 0; j < CONCURRENT; j++)); do
    n=$(data_rows "${archives[$j]}")
    rows+="${rows:+,}$n"
    [ "$n" -gt 0 ] && ran=$((ran + 1))
  done
  if [ "$ran" -gt 1 ]; then
    ok=1
    note "$ran jobs archived rows: they ran at the same time"
  elif [ "$ran" = 0 ]; then
    ok=1
    note "no job archived anything"
  fi
  verify_t camp_ref.h "${archives[@]}" || ok=1
  local what="$CONCURRENT copies of the job at once"
  [ "$kind" = same ] || what+=", every second one with $kind"
  verdict "$ok" "$what; exits $exits; rows archived per job $rows"
}

case_resume_other_archive() {
  new_case resume-other-archive
  fresh_t
  local A=$CD/archive.tsv S=$CD/state.json U=$CD/unrelated.dat ok=0 rc ab size0 size1 sum0 sum1
  local args=("${JOB[@]}" --state "$S")
  # Stopped by Ctrl-C (SIGINT: the chunk in flight finishes, the checkpoint is saved) a third
  # of the way.
  bg_dbio "$CD/log" "${args[@]}" --archive "$A"
  wait_chunks "$S" "$BGPID" $((JOB_CHUNKS / 3)) && kill -INT "$BGPID"
  reap "$BGPID" "$CD/log"
  if finished "$S" || [ ! -e "$S" ]; then
    note "the first run did not stop partway (timing): $(last_err "$CD/log")"
  fi
  ab=$(json_num archive_bytes "$S")
  ab=${ab:-0}
  head -c $((ab + 65536)) /dev/urandom >"$U"
  size0=$(stat -c %s "$U")
  sum0=$(sha256sum <"$U")
  run_dbio "$CD/log" "${args[@]}" --archive "$U" --resume
  rc=$?
  size1=$(stat -c %s "$U")
  sum1=$(sha256sum <"$U")
  if [ "$sum0" = "$sum1" ]; then
    note "the unrelated file is byte-identical"
  else
    ok=1
    note "the unrelated file CHANGED: $size0 -> $size1 bytes (cut to the checkpoint's $ab, then $((size1 > ab ? size1 - ab : 0)) bytes of rows appended)"
  fi
  if [ "$rc" = 0 ]; then ok=1; else note "refused: $(last_err "$CD/log")"; fi
  local archives=("$A")
  if finished "$S"; then
    :
  elif [ "$sum0" = "$sum1" ]; then
    finish "$CD/log" "$S" "$A" "${args[@]}" --archive "$A" || ok=1
  else
    finish "$CD/log" "$S" "$U" "${args[@]}" --archive "$U" || ok=1
  fi
  if [ "$sum0" != "$sum1" ] && [ "$(stat -c %s "$U")" -gt "$ab" ]; then
    # The rows written into the unrelated file, after its first $ab bytes, count too.
    { head -1 "$A"; tail -c +$((ab + 1)) "$U"; } >"$CD/unrelated-tail.tsv"
    archives+=("$CD/unrelated-tail.tsv")
  fi
  verify_t camp_ref.h "${archives[@]}" || ok=1
  verdict "$ok" "--resume --archive naming an unrelated $size0-byte file (the checkpoint's archive length is $ab): exit $rc"
}

# Polls a state file for a pending chunk; delay_us after seeing it, SIGKILLs the pid. Exit 0:
# killed; 1: the job finished or the pid is gone; 2: nothing within the timeout.
POLLER='
use Time::HiRes qw(time);
my ($f, $pid, $parent, $delay, $tmo) = @ARGV;
my $t0 = time;
my $n = 0;
# The pid must still be the script'"'"'s child, not a zombie (else it is gone: exit 1).
sub alive {
  open(my $p, "<", "/proc/$pid/stat") or return 0;
  my $st = <$p>; close $p;
  return $st =~ /\) [^Z] (\d+) / && $1 == $parent;
}
while (1) {
  if (open(my $fh, "<", $f)) {
    local $/; my $s = <$fh>; close $fh;
    if (defined $s) {
      if ($s =~ /"pending":\s*\{/) {
        my $end = time + $delay / 1e6; 1 while time < $end;
        exit 1 unless alive();
        kill "KILL", $pid; exit 0;
      }
      exit 1 if $s =~ /"finished":\s*true/;
    }
  }
  if (++$n % 500 == 0) {
    exit 1 unless alive();
    exit 2 if time - $t0 > $tmo;
  }
}'

case_pending_reinsert() {
  new_case pending-reinsert
  fresh_t
  local A=$CD/archive.tsv S=$CD/state.json ok=0 tries=0 delay=0 prc before key present caught=0
  local args=("${JOB[@]}" --archive "$A" --state "$S") early=0 late=0 keys=
  sql -e "CREATE TABLE camp.exp (id BIGINT NOT NULL, h BINARY(20) NOT NULL, KEY (id), KEY (h));
    INSERT INTO camp.exp SELECT * FROM camp_ref.h" || die "cannot copy the original hashes"
  while [ "$caught" -lt "$PENDING_ROUNDS" ] && [ "$tries" -lt "$PROBE_TRIES" ] && ! finished "$S"; do
    tries=$((tries + 1))
    next_mode "$S" "$A"
    bg_dbio "$CD/log" "${args[@]}" "${MODE[@]}"
    { perl -e "$POLLER" "$S" "$BGPID" "$$" "$delay" 60 2>>"$CD/poller.err"; } 2>/dev/null
    prc=$?
    reap "$BGPID" "$CD/log"
    [ "$prc" = 0 ] || break
    sleep 0.3 # the server ends the dead session (commit or rollback)
    if ! grep -q '"pending": *{' "$S"; then
      late=$((late + 1)) # killed after the checkpoint that follows the COMMIT
      delay=$((delay / 2))
      continue
    fi
    before=$(json_num archive_before "$S")
    if [ -z "$before" ]; then
      note "the checkpoint's pending record has no archive_before: the chunk's first key is unknown"
      break
    fi
    key=$(tail -c +$((before + 1)) "$A" | head -1 | cut -f1)
    present=$(sql -e "SELECT COUNT(*) FROM camp.t WHERE id = ${key:-NULL}")
    if [ "$present" != 0 ]; then
      early=$((early + 1)) # killed before the COMMIT: the chunk rolled back
      delay=$((delay * 2 + 100 > 20000 ? 20000 : delay * 2 + 100))
      continue
    fi
    # The chunk committed; its checkpoint still says pending. An application inserts a new
    # row with the chunk's first key (k = 1: the job's condition matches it too).
    caught=$((caught + 1))
    keys+="${keys:+,}$key"
    sql -e "INSERT INTO camp.t (id, k, name) VALUES ($key, 1, 'application row $caught, key $key');
      INSERT INTO camp.exp SELECT id, $HX_T FROM camp.t WHERE id = $key" ||
      die "cannot insert the application row"
  done
  finish "$CD/log" "$S" "$A" "${args[@]}" || ok=1
  verify_t camp.exp "$A" || ok=1
  local what="$tries kills at a pending chunk ($early before its COMMIT, $late after the next checkpoint)"
  if [ "$caught" = 0 ]; then
    report SKIP "no kill landed between a chunk's COMMIT and its checkpoint: $what; not tested"
    return
  fi
  verdict "$ok" "$caught x: dbio killed after a chunk's COMMIT, its checkpoint still pending, an application row inserted with the chunk's first key ($keys), --resume; $what; original counts the application rows"
}

HX_P="UNHEX(SHA1(CONCAT_WS('|', id, QUOTE(name))))"
HX_C="UNHEX(SHA1(CONCAT_WS('|', id, pid, QUOTE(note))))"
fresh_cascade() {
  local np=$((ROWS / 100 + 100))
  sql -e "DROP DATABASE IF EXISTS camp; CREATE DATABASE camp;
    CREATE TABLE camp.p (id INT NOT NULL PRIMARY KEY, name VARCHAR(40) NOT NULL) ENGINE=InnoDB;
    CREATE TABLE camp.c (id INT NOT NULL PRIMARY KEY, pid INT NOT NULL, note VARCHAR(40) NULL,
      KEY (pid), CONSTRAINT fk_c_p FOREIGN KEY (pid) REFERENCES camp.p (id) ON DELETE CASCADE) ENGINE=InnoDB;
    INSERT INTO camp.p SELECT seq, CONCAT('parent-', seq) FROM camp_ref.seq_1_to_$np;
    INSERT INTO camp.c SELECT seq, 1 + (seq - 1) DIV 3, IF(seq % 5 = 0, NULL, CONCAT('child-', seq)) FROM camp_ref.seq_1_to_$((3 * np));
    CREATE TABLE camp.exp_p (id BIGINT NOT NULL, h BINARY(20) NOT NULL, KEY (id), KEY (h)) SELECT id, $HX_P h FROM camp.p;
    CREATE TABLE camp.exp_c (id BIGINT NOT NULL, h BINARY(20) NOT NULL, KEY (id), KEY (h)) SELECT id, $HX_C h FROM camp.c;" ||
    die "cannot make the cascade tables"
}

# Loads every file dbio left in the case directory (not the checkpoint) that holds rows of p or
# c into parch/carch: TSV by its header, SQL by its INSERTs.
load_cascade_archives() {
  local f h
  LOAD_BAD=0
  sql camp -e "DROP TABLE IF EXISTS parch, carch;
    CREATE TABLE parch AS SELECT * FROM p LIMIT 0; CREATE TABLE carch AS SELECT * FROM c LIMIT 0"
  for f in "$CD"/*; do
    [ -f "$f" ] || continue
    case $f in *.json | */log*) continue ;; esac
    h=$(head -1 "$f")
    if [ "$h" = "$(printf 'id\tname')" ]; then
      load_archive "$f" p parch
    elif [ "$h" = "$(printf 'id\tpid\tnote')" ]; then
      load_archive "$f" c carch
    elif [[ $h == --* ]]; then
      sed -E -e 's/^INSERT INTO (`camp`\.)?`p` /INSERT INTO `camp`.`parch` /' \
        -e 's/^INSERT INTO (`camp`\.)?`c` /INSERT INTO `camp`.`carch` /' "$f" | sql camp ||
        { note "$(basename "$f"): the mariadb client failed"; LOAD_BAD=1; }
    fi
  done
}

case_cascade() {
  new_case cascade
  fresh_cascade
  local A=$CD/parents.tsv S=$CD/state.json rc ok=0 pn pm pd px
  run_dbio "$CD/log" mysql chunk --dsn "$DSN" --table p --where "id % 2 = 0" --delete --execute \
    "${THROTTLE[@]}" --archive "$A" --state "$S"
  rc=$?
  load_cascade_archives
  compare p parch camp.exp_p "$HX_P" || ok=1
  pn=$V_N pm=$V_M pd=$V_DUP px=$V_MISS
  compare c carch camp.exp_c "$HX_C" || ok=1
  if [ "$rc" = 0 ]; then
    ok=1
    note "dbio archived+deleted $pm parents and exited 0; ON DELETE CASCADE took $V_MISS child rows with them, archived nowhere"
  else
    note "refused: exit $rc: $(last_err "$CD/log")"
  fi
  verdict "$ok" "children (counts above) of parents archive+deleted without --archive-children/--allow-cascade; parents: table=$pn archive=$pm dup=$pd missing=$px"

  has_flag --archive-children || return 0
  new_case cascade-archive-children
  fresh_cascade
  A=$CD/parents.sql S=$CD/state.json ok=0
  run_dbio "$CD/log" mysql chunk --dsn "$DSN" --table p --where "id % 2 = 0" --delete --execute \
    "${THROTTLE[@]}" --archive "$A" --archive-format sql --state "$S" --archive-children
  rc=$?
  [ "$rc" = 0 ] || { ok=1; note "exit $rc: $(last_err "$CD/log")"; }
  load_cascade_archives
  compare p parch camp.exp_p "$HX_P" || ok=1
  pn=$V_N pm=$V_M pd=$V_DUP px=$V_MISS
  compare c carch camp.exp_c "$HX_C" || ok=1
  verdict "$ok" "children (counts above) with --archive-children, from every archive file dbio wrote; parents: table=$pn archive=$pm dup=$pd missing=$px"
}

HX_G="UNHEX(SHA1(CONCAT_WS('|', id, a, b, QUOTE(c), h, QUOTE(note))))"
case_generated_invisible() {
  new_case generated-invisible
  local n=$((ROWS / 100 + 100)) A=$CD/archive.sql S=$CD/state.json rc rrc out ok=0
  sql -e "DROP DATABASE IF EXISTS camp; CREATE DATABASE camp;
    CREATE TABLE camp.g (id INT NOT NULL PRIMARY KEY, a INT NOT NULL, b INT AS (a * 2) VIRTUAL,
      c VARCHAR(40) AS (CONCAT('c-', a)) PERSISTENT, h INT INVISIBLE NOT NULL DEFAULT 0,
      note VARCHAR(40) NULL) ENGINE=InnoDB;
    INSERT INTO camp.g (id, a, h, note) SELECT seq, seq * 3, 1 + seq % 100, IF(seq % 7 = 0, NULL, CONCAT('g-', seq)) FROM camp_ref.seq_1_to_$n;
    CREATE TABLE camp.exp_g (id BIGINT NOT NULL, h BINARY(20) NOT NULL, KEY (id), KEY (h)) SELECT id, $HX_G h FROM camp.g;
    CREATE TABLE camp.g_restore LIKE camp.g;" || die "cannot make the generated-column table"
  run_dbio "$CD/log" mysql chunk --dsn "$DSN" --table g --where "id % 2 = 0" --delete --execute \
    "${THROTTLE[@]}" --archive "$A" --archive-format sql --state "$S"
  rc=$?
  [ "$rc" = 0 ] || { ok=1; note "dbio exit $rc: $(last_err "$CD/log")"; }
  LOAD_BAD=0
  out=$(sed -E 's/^INSERT INTO (`camp`\.)?`g` /INSERT INTO `camp`.`g_restore` /' "$A" | sql camp 2>&1)
  rrc=$?
  [ "$rrc" = 0 ] || { ok=1; note "the replay failed: $(first_error "$out")"; }
  compare g g_restore camp.exp_g "$HX_G" || ok=1
  verdict "$ok" "VIRTUAL + PERSISTENT generated and INVISIBLE columns, --archive-format sql replayed by the mariadb client (sql_mode $(sql -e 'SELECT @@sql_mode')) into an empty copy: exit $rrc"
}

# ---- run -----------------------------------------------------------------------------------

T0=$(ms)
echo "fault campaign of dbio mysql chunk: $ROWS rows, where \"$WHERE\", KILLS=$KILLS SERVER_KILLS=$SERVER_KILLS FREEZE=${FREEZE}s CONCURRENT=$CONCURRENT, seed $SEED"
echo "dbio: $DBIO ($("$DBIO" --version 2>/dev/null | head -1)); server: mariadbd $("$MARIADBD" --version | awk '{print $3}') on 127.0.0.1:$PORT"
case_clean_run # always: it times the job for the others
wanted clean-run-sql && case_clean_run_sql
wanted kill-dbio && case_kill_dbio
wanted kill-server && case_kill_server
wanted archive-fs-full && case_archive_fs_full
wanted state-fs-full && case_state_fs_full
wanted frozen-server && case_frozen_server
wanted concurrent-same && case_concurrent concurrent-same same
wanted concurrent-localhost && case_concurrent concurrent-localhost localhost
wanted concurrent-db.t && case_concurrent concurrent-db.t db.t
wanted concurrent-where-space && case_concurrent concurrent-where-space where-space
wanted resume-other-archive && case_resume_other_archive
wanted pending-reinsert && case_pending_reinsert
wanted cascade && case_cascade
wanted generated-invisible && case_generated_invisible

echo "time: $((($(ms) - T0) / 1000)) s"
summary="campaign: $((PASSED + FAILED + SKIPPED)) cases, $PASSED passed, $FAILED failed"
[ "$SKIPPED" -gt 0 ] && summary+=", $SKIPPED not tested"
echo "$summary"
[ "$FAILED" = 0 ]
