#!/usr/bin/env bash
# dbio next to its peers: the same workloads, on the same file, with dbio, fio and sysbench
# fileio, in one run, so the figures are comparable (they vary from run to run and machine
# to machine; only a side-by-side run means anything). Prints each figure and dbio/peer.
#
#   scripts/bench-peers.sh            # ~2 minutes
#   TIME=4 scripts/bench-peers.sh     # shorter: TIME whole seconds per tool and workload
#   KEEP_RAW=/tmp/peers scripts/bench-peers.sh   # also keep each tool's JSON/text output there
#
# Each comparison runs in the order dbio, peer, peer, dbio, each leg TIME/2 seconds, and
# reports the mean of the two legs: drift (a virtual disk warming up, other processes on the
# CPUs) then hits both tools alike, and the "spread" column shows how noisy the legs were.
#
# Workloads (1 thread, O_DIRECT, random reads, every I/O timed by every tool):
#   a. /dev/shm, 4 KiB, 1 file of 1 GiB: dbio --engine sync vs sysbench sync and fio psync
#   b. /dev/shm, 4 KiB, io_uring QD 32: dbio --engine uring vs fio io_uring (fixedbufs,
#      registerfiles, no sqthread_poll, no hipri)
#   c. a directory on / (DISK_DIR), 16 KiB, 1 file of 2 GiB: QD 32 (uring vs fio io_uring)
#      and QD 1 (sync vs fio psync): IOPS, p50 and p99 against fio's completion latency
# dbio prepares each file set (random data); fio and sysbench read the very same file
# (sysbench through a symlink named test_file.0). Everything made here is removed at exit.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TIME=${TIME:-10}
LEG=$((TIME / 2 > 0 ? TIME / 2 : 1))   # each tool runs twice, LEG seconds each
WARMUP=${WARMUP:-1}
SHM_BASE=${SHM_BASE:-/dev/shm}
DISK_BASE=${DISK_BASE:-/var/tmp}

log() { echo "bench-peers: $*" >&2; }

# --- tools ----------------------------------------------------------------------------------
need=()
command -v fio >/dev/null || need+=(fio)
command -v sysbench >/dev/null || need+=(sysbench)
command -v jq >/dev/null || need+=(jq)
if ((${#need[@]})); then
    log "installing ${need[*]}"
    if [ "$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

log "building dbio --release"
(cd "$ROOT" && cargo build --release -q -p dbio)
DBIO=$ROOT/target/release/dbio

# --- scratch space, removed at exit (only what this script made) -------------------------------
SHM_DIR=$(mktemp -d "$SHM_BASE/dbio-peers.XXXXXX")
DISK_DIR=$(mktemp -d "$DISK_BASE/dbio-peers.XXXXXX")
OUT=$(mktemp -d "${TMPDIR:-/tmp}/dbio-peers-out.XXXXXX")
cleanup() {
    for d in "$SHM_DIR" "$DISK_DIR"; do
        rm -f "$d/set/test_file.0"                   # our symlink for sysbench, if a run stopped
        if [ -e "$d/set/.dbio-fileset.json" ]; then  # a file set dbio has not removed yet
            "$DBIO" bench cleanup --dir "$d/set" >/dev/null || log "dbio cleanup of $d/set failed"
        fi
        rmdir "$d" 2>/dev/null || log "left $d (not empty)"
    done
    if [ -n "${KEEP_RAW:-}" ]; then                  # every tool's raw output, for a closer look
        mkdir -p "$KEEP_RAW" && cp "$OUT"/* "$KEEP_RAW"/ && log "raw outputs in $KEEP_RAW"
    fi
    rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- helpers ----------------------------------------------------------------------------------
# prepare DIR BLOCK SIZE: a 1-file dbio file set; prints the data file's path
prepare() {
    local dir=$1 bs=$2 size=$3
    "$DBIO" bench prepare --dir "$dir" --mode rndrd --block-size "$bs" --file-num 1 \
        --file-total-size "$size" >&2
    local f
    f=$(find "$dir" -maxdepth 1 -type f -size +1M | head -n 1)
    [ -n "$f" ] || { log "no data file in $dir after dbio bench prepare"; exit 1; }
    echo "$f"
}

# dbio_run NAME DIR BS SIZE ENGINE IODEPTH [extra options]: writes $OUT/NAME.json
dbio_run() {
    local name=$1 dir=$2 bs=$3 size=$4 engine=$5 depth=$6
    shift 6
    log "dbio $name"
    "$DBIO" bench run --dir "$dir" --mode rndrd --engine "$engine" --iodepth "$depth" --direct \
        --block-size "$bs" --file-num 1 --file-total-size "$size" --threads 1 "$@" \
        --time "${LEG}s" --warmup "${WARMUP}s" --seed 1 --format json \
        --output "$OUT/$name.json" >/dev/null 2>"$OUT/$name.log" ||
        { cat "$OUT/$name.log" >&2; exit 1; }
}
dbio_get() { jq -r "$2" "$OUT/$1.json"; }

# fio_run NAME FILE BS SIZE ENGINE IODEPTH [extra options]: writes $OUT/NAME.fio.json
fio_run() {
    local name=$1 file=$2 bs=$3 size=$4 engine=$5 depth=$6
    shift 6
    log "fio $name"
    fio --name="$name" --filename="$file" --size="$size" --rw=randread --bs="$bs" --direct=1 \
        --ioengine="$engine" --iodepth="$depth" --numjobs=1 --time_based \
        --runtime="$LEG" --ramp_time="$WARMUP" --norandommap --randrepeat=0 \
        --percentile_list=50:99 "$@" \
        --output-format=json --output="$OUT/$name.fio.json" >/dev/null
}
fio_get() { jq -r "$2" "$OUT/$1.fio.json"; }

# sysbench_run NAME DIR FILE BS SIZE: sysbench fileio rndrd on FILE (as test_file.0)
sysbench_run() {
    local name=$1 dir=$2 file=$3 bs=$4 size=$5
    log "sysbench $name"
    ln -sf "$(basename "$file")" "$dir/test_file.0"
    (cd "$dir" && sysbench fileio --file-num=1 --file-total-size="$size" \
        --file-test-mode=rndrd --file-block-size="$bs" --file-extra-flags=direct \
        --file-fsync-freq=0 --file-io-mode=sync --threads=1 --time="$LEG" run) \
        >"$OUT/$name.sysbench.txt"
    rm -f "$dir/test_file.0"
}
sysbench_iops() { awk '/reads\/s:/ {print $2}' "$OUT/$1.sysbench.txt"; }

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=()
# row WORKLOAD METRIC "dbio1 dbio2" "peer1 peer2": the mean of each tool's two legs, their
# ratio, and the spread (largest difference between one tool's two legs, in %): the noise.
row() { ROWS+=("$1|$2|$3|$4"); }

# --- a. /dev/shm, 4 KiB, QD 1: dbio, sysbench, fio, fio, sysbench, dbio ----------------------
# dbio opens with O_NOATIME by default; fio and sysbench cannot. The --atime legs do the same
# kernel work as the peers (access-time bookkeeping included), so both comparisons are shown.
SHM_FILE=$(prepare "$SHM_DIR/set" 4k 1G)
dbio_run shm-sync-1 "$SHM_DIR/set" 4k 1G sync 1
dbio_run shm-sync-atime-1 "$SHM_DIR/set" 4k 1G sync 1 --atime
sysbench_run shm-sync-1 "$SHM_DIR/set" "$SHM_FILE" 4096 1G
fio_run shm-psync-1 "$SHM_FILE" 4k 1G psync 1
fio_run shm-psync-2 "$SHM_FILE" 4k 1G psync 1
sysbench_run shm-sync-2 "$SHM_DIR/set" "$SHM_FILE" 4096 1G
dbio_run shm-sync-atime-2 "$SHM_DIR/set" 4k 1G sync 1 --atime
dbio_run shm-sync-2 "$SHM_DIR/set" 4k 1G sync 1
d="$(dbio_get shm-sync-1 .summary.read.iops) $(dbio_get shm-sync-2 .summary.read.iops)"
da="$(dbio_get shm-sync-atime-1 .summary.read.iops) $(dbio_get shm-sync-atime-2 .summary.read.iops)"
sb="$(sysbench_iops shm-sync-1) $(sysbench_iops shm-sync-2)"
fp="$(fio_get shm-psync-1 '.jobs[0].read.iops') $(fio_get shm-psync-2 '.jobs[0].read.iops')"
row "a. shm 4k rndrd QD1: dbio sync vs sysbench sync" "IOPS" "$d" "$sb"
row "a. shm 4k rndrd QD1: dbio sync vs fio psync" "IOPS" "$d" "$fp"
row "a. same, dbio --atime vs sysbench sync" "IOPS" "$da" "$sb"
row "a. same, dbio --atime vs fio psync" "IOPS" "$da" "$fp"

# --- b. /dev/shm, 4 KiB, io_uring QD 32: dbio, fio, fio, dbio ---------------------------------
FIO_URING=(--fixedbufs=1 --registerfiles=1 --sqthread_poll=0 --hipri=0)
dbio_run shm-uring-1 "$SHM_DIR/set" 4k 1G uring 32
fio_run shm-uring-1 "$SHM_FILE" 4k 1G io_uring 32 "${FIO_URING[@]}"
fio_run shm-uring-2 "$SHM_FILE" 4k 1G io_uring 32 "${FIO_URING[@]}"
dbio_run shm-uring-2 "$SHM_DIR/set" 4k 1G uring 32
row "b. shm 4k rndrd QD32: dbio uring vs fio io_uring" "IOPS" \
    "$(dbio_get shm-uring-1 .summary.read.iops) $(dbio_get shm-uring-2 .summary.read.iops)" \
    "$(fio_get shm-uring-1 '.jobs[0].read.iops') $(fio_get shm-uring-2 '.jobs[0].read.iops')"
"$DBIO" bench cleanup --dir "$SHM_DIR/set" >&2

# --- c. the disk, 16 KiB, QD 32 and QD 1: dbio, fio, fio, dbio each ----------------------------
DISK_FILE=$(prepare "$DISK_DIR/set" 16k 2G)
dbio_run disk-uring-1 "$DISK_DIR/set" 16k 2G uring 32
fio_run disk-uring-1 "$DISK_FILE" 16k 2G io_uring 32 "${FIO_URING[@]}"
fio_run disk-uring-2 "$DISK_FILE" 16k 2G io_uring 32 "${FIO_URING[@]}"
dbio_run disk-uring-2 "$DISK_DIR/set" 16k 2G uring 32
dbio_run disk-sync-1 "$DISK_DIR/set" 16k 2G sync 1
fio_run disk-psync-1 "$DISK_FILE" 16k 2G psync 1
fio_run disk-psync-2 "$DISK_FILE" 16k 2G psync 1
dbio_run disk-sync-2 "$DISK_DIR/set" 16k 2G sync 1
both_dbio() { echo "$(dbio_get "$1-1" "$2") $(dbio_get "$1-2" "$2")"; }
both_fio() { echo "$(fio_get "$1-1" "$2") $(fio_get "$1-2" "$2")"; }
for pair in "disk-uring disk-uring QD32 uring io_uring" "disk-sync disk-psync QD1 sync psync"; do
    read -r dn fn qd de fe <<<"$pair"
    w="c. disk 16k rndrd $qd: dbio $de vs fio $fe"
    row "$w" "IOPS" "$(both_dbio "$dn" .summary.read.iops)" "$(both_fio "$fn" '.jobs[0].read.iops')"
    row "$w" "p50 us (fio clat)" "$(both_dbio "$dn" '.summary.read.lat_ns.p50 / 1000')" \
        "$(both_fio "$fn" '.jobs[0].read.clat_ns.percentile["50.000000"] / 1000')"
    row "$w" "p99 us (fio clat)" "$(both_dbio "$dn" '.summary.read.lat_ns.p99 / 1000')" \
        "$(both_fio "$fn" '.jobs[0].read.clat_ns.percentile["99.000000"] / 1000')"
done

# --- table ------------------------------------------------------------------------------------
echo
echo "dbio $("$DBIO" --version 2>/dev/null | awk '{print $2}'), $(fio --version), $(sysbench --version | head -n 1);" \
    "kernel $(uname -r), $(nproc) CPUs, load average $LOAD_START at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "each figure: mean of 2 legs of ${LEG}s run in the order dbio, peer, peer, dbio (dbio and fio after ${WARMUP}s warmup);" \
    "spread: largest gap between one tool's 2 legs"
printf '%s\n' "${ROWS[@]}" | awk -F'|' '
    function spread(a, b) { return (a + b > 0) ? 200 * (a > b ? a - b : b - a) / (a + b) : 0 }
    BEGIN { printf "%-50s %-18s %11s %11s %9s %7s\n", "workload", "metric", "dbio", "peer", "dbio/peer", "spread" }
    { split($3, d, " "); split($4, p, " ")
      dm = (d[1] + d[2]) / 2; pm = (p[1] + p[2]) / 2
      s = spread(d[1], d[2]); if (spread(p[1], p[2]) > s) s = spread(p[1], p[2])
      r = (pm > 0) ? sprintf("%.3f", dm / pm) : "-"
      printf "%-50s %-18s %11.1f %11.1f %9s %6.0f%%\n", $1, $2, dm, pm, r, s }'
