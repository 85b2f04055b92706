#!/usr/bin/env bash
# The memory-filesystem io_uring pairs of bench-peers.sh (4 KiB random reads, QD 32, one
# thread, O_DIRECT, 1 GiB file on /dev/shm), with more legs per round and the per-leg figures:
# interleaved rounds, every leg once per round, then each leg's median/min/max/mean IOPS and
# the ratios of the means. A measurement, not a test (issue 17).
#
#   scripts/bench-shm-pairs.sh                   # 16 rounds of 3 s legs, the default legs
#   ROUNDS=8 LEG=2 LEGS="fio d16 d0" scripts/bench-shm-pairs.sh
#
# Legs: fio (io_uring, plain reads, nothing registered), fiofix (--fixedbufs --registerfiles),
# dN (dbio --spin-polls N, plain reads), dfN (dbio --fixed-buffers --register-files
# --spin-polls N), xN (the dN leg with the binary DBIO_X: two builds compared in the same
# rounds). Environment: DBIO (a dbio binary; default: this tree's release build), DBIO_X,
# SHM_BASE (default /dev/shm).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-16} LEG=${LEG:-3} LEGS=${LEGS:-"fio d16 d0 fiofix df16"}
command -v fio >/dev/null || { echo "bench-shm-pairs: needs fio (apt-get install fio)" >&2; exit 2; }
command -v jq >/dev/null || { echo "bench-shm-pairs: needs jq (apt-get install jq)" >&2; exit 2; }
if [ -z "${DBIO:-}" ]; then
    cargo build --release -q -p dbio
    DBIO=$PWD/target/release/dbio
fi
DIR=$(mktemp -d "${SHM_BASE:-/dev/shm}/dbio-shm-pairs.XXXXXX")
OUT=$(mktemp)
trap '"$DBIO" bench cleanup --dir "$DIR/set" >/dev/null 2>&1; rmdir "$DIR"; rm -f "$OUT"' EXIT
"$DBIO" bench prepare --dir "$DIR/set" --file-num 1 --file-total-size 1G --block-size 4k >&2
FILE=$DIR/set/dbio-file.0
fio_leg() {
    fio --name=x --filename="$FILE" --size=1G --rw=randread --bs=4k --direct=1 --ioengine=io_uring \
        --iodepth=32 --numjobs=1 --time_based --runtime="$LEG" --ramp_time=1 --norandommap \
        --randrepeat=0 --sqthread_poll=0 --hipri=0 "$@" --output-format=json | jq -r '.jobs[0].read.iops'
}
dbio_leg() {
    local bin=$DBIO
    if [ "$1" = x ]; then bin=$DBIO_X; shift; fi
    "$bin" bench run --dir "$DIR/set" --mode rndrd --engine uring --iodepth 32 --direct \
        --block-size 4k --file-num 1 --file-total-size 1G --threads 1 "$@" --time "${LEG}s" \
        --warmup 1s --seed 1 --format json 2>/dev/null | jq -r '.summary.read.iops'
}
read -r -a legs <<<"$LEGS"
echo "bench-shm-pairs: $ROUNDS rounds x ${LEG}s legs: ${legs[*]}; load average $(cut -d' ' -f1-3 /proc/loadavg) at the start" >&2
for ((r = 1; r <= ROUNDS; r++)); do
    for leg in "${legs[@]}"; do
        case $leg in
        fio) v=$(fio_leg) ;;
        fiofix) v=$(fio_leg --fixedbufs=1 --registerfiles=1) ;;
        df[0-9]*) v=$(dbio_leg --fixed-buffers --register-files --spin-polls "${leg#df}") ;;
        d[0-9]*) v=$(dbio_leg --spin-polls "${leg#d}") ;;
        x[0-9]*) v=$(dbio_leg x --spin-polls "${leg#x}") ;;
        *) echo "bench-shm-pairs: unknown leg $leg" >&2; exit 2 ;;
        esac
        echo "$r $leg $v" >>"$OUT"
        echo "bench-shm-pairs: round $r/$ROUNDS $leg: $v" >&2
    done
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end" >&2
printf '%-8s %10s %10s %10s %10s\n' leg median min max mean
for leg in "${legs[@]}"; do
    awk -v l="$leg" '$2 == l {print $3}' "$OUT" | sort -g | awk -v l="$leg" '
        {v[NR] = $1; s += $1}
        END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
             printf "%-8s %10.0f %10.0f %10.0f %10.0f\n", l, m, v[1], v[NR], s / NR}'
done
mean() { awk -v l="$1" '$2 == l {s += $3; n++} END {print s / n}' "$OUT"; }
for pair in "d16 fio" "d0 fio" "df16 fiofix"; do
    set -- $pair
    if [[ " ${legs[*]} " == *" $1 "* && " ${legs[*]} " == *" $2 "* ]]; then
        awk -v a="$(mean "$1")" -v b="$(mean "$2")" -v n="$1 / $2" 'BEGIN {printf "%-14s ratio of the means %.3f\n", n, a / b}'
    fi
done
