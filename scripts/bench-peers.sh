#!/usr/bin/env bash
# dbio next to its peers: the same workloads, on the same file, with dbio, fio and sysbench
# fileio, in one run, so the figures are comparable (they vary from run to run and machine
# to machine; only a side-by-side run means anything). Prints each figure, dbio/peer, the
# range of that ratio over the rounds, and whether the project's goal for it is met.
#
#   scripts/bench-peers.sh                 # ~4 minutes: 6 rounds of 2-second legs
#   ROUNDS=10 LEG=5 scripts/bench-peers.sh # more, longer legs: less noise
#   KEEP_RAW=/tmp/peers scripts/bench-peers.sh   # also keep each tool's JSON/text output there
#   scripts/bench-peers.sh --disk 40       # the disk only, 40 interleaved rounds per workload
#                                          # (scripts/bench-fastlevel.sh, ~40 minutes): median,
#                                          # p90, max IOPS per tool, p50/p99, r_await/w_await
#
# Every comparison runs ROUNDS rounds; in each round every tool runs one LEG-second leg, and
# the order turns round to round (dbio first, then the peers first, ...), so drift (a virtual
# disk warming up, other processes on the CPUs) hits every tool alike. A figure is the mean of a
# tool's legs; "range" is the lowest and highest ratio of single rounds: the noise.
#
# Workloads (1 thread, O_DIRECT, random reads, every I/O timed by every tool):
#   a. /dev/shm, 4 KiB, 1 file of 1 GiB: dbio --engine sync vs sysbench sync and fio psync
#      (and dbio --atime, which does the same access-time bookkeeping as the peers)
#   b. /dev/shm, 4 KiB, io_uring QD 32: dbio --engine uring vs fio io_uring, like for like
#      twice: both with registered buffers and files (dbio --fixed-buffers --register-files,
#      fio --fixedbufs --registerfiles) and both at their defaults (plain reads by descriptor);
#      no sqthread_poll, no hipri; both keep 32 in flight (fio's default
#      iodepth_batch_submit=1 and iodepth_batch_complete_max=1, dbio's --submit-batch 1
#      --reap-batch 1)
#   c. a directory on / (DISK_BASE), 16 KiB, 1 file of 2 GiB: QD 32 (uring vs fio io_uring:
#      plain reads, nothing registered) and QD 1 (sync vs fio psync): IOPS, p50 and p99 against
#      fio's completion latency, like for like twice: dbio's default (buffers in huge pages)
#      against fio --iomem=mmaphuge, and dbio --no-huge-pages against fio's default (malloc)
# dbio prepares each file set (random data); fio and sysbench read the very same file
# (sysbench through a symlink named test_file.0). Everything made here is removed at exit.
#
# Goals (from the project's issue 2): a and b at least 1.15x the peer's IOPS; c IOPS within
# 5% of fio, p50 and p99 within 10% of fio's completion latency.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)

# --disk ROUNDS: interleaved rounds on the disk for every workload issue 17 names
if [ "${1:-}" = --disk ]; then
    n=${2:?"usage: scripts/bench-peers.sh --disk ROUNDS"}
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench-peers: --disk takes a number of rounds, not '$n'" >&2; exit 2; }
    if [ -z "${DBIO:-}" ]; then
        (cd "$ROOT" && cargo build --release -q -p dbio)
        export DBIO=$ROOT/target/release/dbio
    fi
    for w in "uring rndrd" "sync rndrd" "uring rndwr" "sync rndwr" "sync commit"; do
        read -r engine mode <<<"$w"
        echo
        echo "== $engine $mode"
        ROUNDS=$n ENGINE=$engine MODE=$mode "$ROOT/scripts/bench-fastlevel.sh"
    done
    exit 0
fi

ROUNDS=${ROUNDS:-6}
LEG=${LEG:-2}
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
trap 'cleanup; hugetlb_restore' EXIT
trap 'exit 130' INT TERM
# shellcheck source=scripts/hugetlb.sh
. "$ROOT/scripts/hugetlb.sh"
hugetlb_reserve 8 || exit 2

# --- one leg of each tool: prints "IOPS p50_us p99_us" (sysbench: IOPS only) ------------------
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

# dbio_leg NAME DIR BS SIZE ENGINE IODEPTH [extra options]
dbio_leg() {
    local name=$1 dir=$2 bs=$3 size=$4 engine=$5 depth=$6
    shift 6
    "$DBIO" bench run --dir "$dir" --mode rndrd --engine "$engine" --iodepth "$depth" --direct \
        --block-size "$bs" --file-num 1 --file-total-size "$size" --threads 1 "$@" \
        --time "${LEG}s" --warmup "${WARMUP}s" --seed 1 --format json \
        --output "$OUT/$name.json" >/dev/null 2>"$OUT/$name.log" ||
        { cat "$OUT/$name.log" >&2; exit 1; }
    # the 4th figure: requests the device under the target completed per dbio I/O over the
    # measured run (/proc/diskstats; 0 where there is no device, as on tmpfs)
    jq -r '.summary | "\(.read.iops) \(.read.lat_ns.p50 / 1000) \(.read.lat_ns.p99 / 1000) \(
        if .device_check then .device_check.device_requests / .device_check.app_ios else 0 end)"' \
        "$OUT/$name.json"
}

# fio_leg NAME FILE BS SIZE ENGINE IODEPTH [extra options]
fio_leg() {
    local name=$1 file=$2 bs=$3 size=$4 engine=$5 depth=$6
    shift 6
    fio --name="$name" --filename="$file" --size="$size" --rw=randread --bs="$bs" --direct=1 \
        --ioengine="$engine" --iodepth="$depth" --numjobs=1 --time_based \
        --runtime="$LEG" --ramp_time="$WARMUP" --norandommap --randrepeat=0 \
        --percentile_list=50:99 "$@" \
        --output-format=json --output="$OUT/$name.fio.json" >/dev/null
    jq -r '.jobs[0].read | "\(.iops) \(.clat_ns.percentile["50.000000"] / 1000) \(.clat_ns.percentile["99.000000"] / 1000)"' \
        "$OUT/$name.fio.json"
}

# sysbench_leg NAME DIR FILE BS SIZE: sysbench fileio rndrd on FILE (as test_file.0)
sysbench_leg() {
    local name=$1 dir=$2 file=$3 bs=$4 size=$5
    ln -sf "$(basename "$file")" "$dir/test_file.0"
    (cd "$dir" && sysbench fileio --file-num=1 --file-total-size="$size" \
        --file-test-mode=rndrd --file-block-size="$bs" --file-extra-flags=direct \
        --file-fsync-freq=0 --file-io-mode=sync --threads=1 --time="$LEG" run) \
        >"$OUT/$name.sysbench.txt"
    rm -f "$dir/test_file.0"
    awk '/reads\/s:/ {print $2, 0, 0}' "$OUT/$name.sysbench.txt"
}

# compare NAME TOOL... : ROUNDS rounds of one leg per tool, the order turning each round; each
# TOOL is a function name (called as TOOL NAME-ROUND). Appends "NAME TOOL ROUND IOPS P50 P99"
# lines to $OUT/legs.
compare() {
    local name=$1
    shift
    local tools=("$@") n=$# r i t res
    for ((r = 1; r <= ROUNDS; r++)); do
        for ((i = 0; i < n; i++)); do
            # odd rounds: as given; even rounds: reversed
            if ((r % 2)); then t=${tools[i]}; else t=${tools[n - 1 - i]}; fi
            log "$name round $r/$ROUNDS: $t"
            res=$("$t" "$name-$t-$r")
            echo "$name $t $r $res" >>"$OUT/legs"
        done
    done
}

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$OUT/legs"

# --- a. /dev/shm, 4 KiB, QD 1 ------------------------------------------------------------------
SHM_FILE=$(prepare "$SHM_DIR/set" 4k 1G)
a_dbio() { dbio_leg "$1" "$SHM_DIR/set" 4k 1G sync 1; }
a_dbio_atime() { dbio_leg "$1" "$SHM_DIR/set" 4k 1G sync 1 --atime; }
a_sysbench() { sysbench_leg "$1" "$SHM_DIR/set" "$SHM_FILE" 4096 1G; }
a_fio() { fio_leg "$1" "$SHM_FILE" 4k 1G psync 1; }
compare a a_dbio a_sysbench a_fio a_dbio_atime

# --- b. /dev/shm, 4 KiB, io_uring QD 32 ---------------------------------------------------------
FIO_URING=(--sqthread_poll=0 --hipri=0)
FIO_FIXED=(--fixedbufs=1 --registerfiles=1)
b_dbio() { dbio_leg "$1" "$SHM_DIR/set" 4k 1G uring 32 --fixed-buffers --register-files; }
b_fio() { fio_leg "$1" "$SHM_FILE" 4k 1G io_uring 32 "${FIO_URING[@]}" "${FIO_FIXED[@]}"; }
b_dbio_plain() { dbio_leg "$1" "$SHM_DIR/set" 4k 1G uring 32; }
b_fio_plain() { fio_leg "$1" "$SHM_FILE" 4k 1G io_uring 32 "${FIO_URING[@]}"; }
compare b b_dbio b_fio b_dbio_plain b_fio_plain
"$DBIO" bench cleanup --dir "$SHM_DIR/set" >&2

# --- c. the disk, 16 KiB, QD 32 and QD 1 ----------------------------------------------------------
DISK_FILE=$(prepare "$DISK_DIR/set" 16k 2G)
c32_dbio() { dbio_leg "$1" "$DISK_DIR/set" 16k 2G uring 32; }
c32_fio() { fio_leg "$1" "$DISK_FILE" 16k 2G io_uring 32 "${FIO_URING[@]}"; }
c32_dbio_small() { dbio_leg "$1" "$DISK_DIR/set" 16k 2G uring 32 --no-huge-pages; }
c32_fio_huge() { fio_leg "$1" "$DISK_FILE" 16k 2G io_uring 32 "${FIO_URING[@]}" --iomem=mmaphuge; }
c1_dbio() { dbio_leg "$1" "$DISK_DIR/set" 16k 2G sync 1; }
c1_fio() { fio_leg "$1" "$DISK_FILE" 16k 2G psync 1; }
c1_dbio_small() { dbio_leg "$1" "$DISK_DIR/set" 16k 2G sync 1 --no-huge-pages; }
c1_fio_huge() { fio_leg "$1" "$DISK_FILE" 16k 2G psync 1 --iomem=mmaphuge; }
compare c32 c32_dbio c32_fio_huge c32_dbio_small c32_fio
compare c1 c1_dbio c1_fio_huge c1_dbio_small c1_fio

# --- table --------------------------------------------------------------------------------------
echo
echo "dbio $("$DBIO" --version 2>/dev/null | awk '{print $2}'), $(fio --version), $(sysbench --version | head -n 1);" \
    "kernel $(uname -r), $(nproc) CPUs, load average $LOAD_START at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "each figure: mean of $ROUNDS legs of ${LEG}s per tool, the tools' order turning each round" \
    "(dbio and fio after ${WARMUP}s warmup); dbio/peer: ratio of the means; median, range: of the" \
    "$ROUNDS single-round ratios; goals are judged on the ratio of the means"
# row LABEL NAME DBIO_TOOL PEER_TOOL FIELD(2 IOPS, 3 p50, 4 p99) METRIC GOAL
# GOAL: "min:1.15" (ratio at least), "within:0.05" (|ratio - 1| at most)
row() { echo "$1|$2|$3|$4|$5|$6|$7"; }
{
    row "a. shm 4k rndrd QD1: dbio sync vs sysbench sync" a a_dbio a_sysbench 2 IOPS min:1.15
    row "a. shm 4k rndrd QD1: dbio sync vs fio psync" a a_dbio a_fio 2 IOPS min:1.15
    row "a. same, dbio --atime vs sysbench sync" a a_dbio_atime a_sysbench 2 IOPS -
    row "a. same, dbio --atime vs fio psync" a a_dbio_atime a_fio 2 IOPS -
    row "b. shm 4k QD32, registered bufs+files: dbio vs fio" b b_dbio b_fio 2 IOPS min:1.15
    row "b. shm 4k QD32, plain reads: dbio vs fio" b b_dbio_plain b_fio_plain 2 IOPS min:1.15
    for q in "32 uring io_uring" "1 sync psync"; do
        read -r qd de fe <<<"$q"
        for p in "huge-page buffers:_dbio:_fio_huge" "4 KiB-page buffers:_dbio_small:_fio"; do
            IFS=: read -r what d f <<<"$p"
            w="c. disk 16k QD$qd, $what: dbio $de vs fio $fe"
            row "$w" "c$qd" "c${qd}$d" "c${qd}$f" 2 IOPS within:0.05
            row "$w" "c$qd" "c${qd}$d" "c${qd}$f" 3 "p50 us (fio clat)" within:0.10
            row "$w" "c$qd" "c${qd}$d" "c${qd}$f" 4 "p99 us (fio clat)" within:0.10
        done
    done
} | awk -F'|' -v legs="$OUT/legs" '
    BEGIN {
        while ((getline l < legs) > 0) {
            split(l, f, " ")   # name tool round iops p50 p99
            v[f[1], f[2], f[3], 2] = f[4]; v[f[1], f[2], f[3], 3] = f[5]; v[f[1], f[2], f[3], 4] = f[6]
            if (f[3] > rounds) rounds = f[3]
        }
        printf "%-62s %-18s %11s %11s %9s %6s %13s  %s\n", "workload", "metric", "dbio", "peer", "dbio/peer", "median", "range", "goal"
    }
    {
        sd = 0; sp = 0; n = 0
        for (r = 1; r <= rounds; r++) {
            d = v[$2, $3, r, $5]; p = v[$2, $4, r, $5]
            sd += d; sp += p
            if (p > 0) {   # insertion sort of the single-round ratios
                q = d / p
                for (k = n; k > 0 && rs[k] > q; k--) rs[k + 1] = rs[k]
                rs[k + 1] = q; n++
            }
        }
        lo = rs[1]; hi = rs[n]
        med = (n % 2) ? rs[(n + 1) / 2] : (rs[n / 2] + rs[n / 2 + 1]) / 2
        dm = sd / rounds; pm = sp / rounds
        ratio = (pm > 0) ? dm / pm : 0
        split($7, g, ":")
        if (g[1] == "min") goal = sprintf(">= %.2f: %s", g[2], ratio >= g[2] ? "met" : "NOT met")
        else if (g[1] == "within") goal = sprintf("within %d%%: %s", g[2] * 100, (ratio - 1 <= g[2] && 1 - ratio <= g[2]) ? "met" : "NOT met")
        else goal = ""
        printf "%-62s %-18s %11.1f %11.1f %9.3f %6.3f %6.3f-%-6.3f  %s\n", $1, $6, dm, pm, ratio, med, lo, hi, goal
    }'
# dbio checks itself against the disk's own counters on every disk leg
awk '$2 ~ /^c[0-9]+_dbio$/ {
        k = $1; x = $7 + 0
        if (!(k in lo) || x < lo[k]) lo[k] = x
        if (!(k in hi) || x > hi[k]) hi[k] = x
    }
    END {
        for (k in lo) printf "device check, %s disk legs of dbio: the device completed %.3f-%.3f requests per dbio I/O (/proc/diskstats over each measured run)\n", k, lo[k], hi[k]
    }' "$OUT/legs" | sort
