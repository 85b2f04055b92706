#!/usr/bin/env bash
# Does dbio see the disk's faster level as often as fio does? (issue 17)
#
# Interleaved rounds of 16 KiB O_DIRECT random reads (or writes: MODE=rndwr), io_uring QD 32,
# one thread, over ONE file set of 4 x 256 MiB made by `dbio bench prepare`, read by every leg:
# dbio in several setups and fio 3.33 in several setups. Each round runs every leg once, the order rotating from round
# to round, so the disk's slow and fast periods and the other processes on the CPUs hit every
# leg alike. For each leg it prints the median, p90 and max of per-round IOPS, the rounds above
# FAST IOPS, and what the kernel saw over the leg (/proc/diskstats of the disk under the files:
# r_await = ms spent on reads / reads, aqu-sz = weighted ms in queue / ms the disk was busy).
# Latency is given two ways: the median over the rounds of each round's p50/p99, and the p50/p99
# of every I/O of every round pooled (fio's json+ latency bins, ~1.6% wide, and dbio's
# histogram, 2 significant digits, merged per leg): the per-round median shrugs off one bad
# round, the pooled figure is the tail a user of the whole run would see.
#
#   scripts/bench-fastlevel.sh                        # 40 rounds of the default legs
#                                                     # (fio, fio_huge, dbio, small)
#   ROUNDS=10 LEGS="fio dbio" scripts/bench-fastlevel.sh
#   KEEP=/tmp/fastlevel scripts/bench-fastlevel.sh    # keep the per-leg lines (legs.tsv)
#
# Legs (LEGS, space separated):
#   fio          fio --ioengine=io_uring (psync with ENGINE=sync) --norandommap: offsets drawn as
#                dbio draws them, uniformly with repeats; otherwise fio's defaults (plain READ,
#                nothing registered, buffers from malloc)
#   fio_map      fio with its default random map instead (every block once per pass, no repeats)
#   fio_fixed    fio --norandommap --fixedbufs (READ_FIXED on registered buffers)
#   fio_huge     fio --norandommap --iomem=mmaphuge: its buffers in a 2 MiB huge page, like dbio's
#                default (the script reserves a few hugetlb pages, vm.nr_hugepages, and puts the
#                count back)
#   dbio         dbio bench run --engine uring, its defaults (plain READ, buffers in huge pages)
#   dbio_fixed   dbio --fixed-buffers (READ_FIXED on registered buffers)
#   dbio_reg     dbio --fixed-buffers --register-files
#   small=--no-huge-pages   dbio with its buffers in 4 KiB pages (4 scattered pages per 16 KiB
#                request: on a virtual disk, the slow level; see issue 17)
#   NAME=SPEC    dbio with extra options or environment (comma separated), shown as NAME,
#                e.g. "dbio_atime=--atime" or "both=--fixed-buffers,--register-files"; a word
#                bin=PATH runs another dbio binary (two builds in the same rounds)
#
# Environment: ENGINE (uring: io_uring at QD 32, fio --ioengine=io_uring; sync: one pread/pwrite
# at a time, fio --ioengine=psync; the fio_fixed leg needs uring),
# MODE (rndrd; rndwr: random writes over the same files, fio --rw=randwrite; commit: dbio's
# commit mode, appending 16 KiB records to a new log with an fdatasync after each, against fio
# appending to a new log of its own the same way, --rw=write --fdatasync=1 --fallocate=none;
# ENGINE=sync only),
# ROUNDS (40), LEG seconds (2), FAST IOPS threshold (50000), DIR (a scratch
# directory on the disk, default /var/tmp; the file set is made there and removed at exit),
# DBIO (the binary; default: build target/release/dbio).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-40}
LEG=${LEG:-2}
FAST=${FAST:-50000}
LEGS=${LEGS:-"fio fio_huge dbio small=--no-huge-pages"}
# PAIRS: like-for-like comparisons printed after the table, "A:B" = A against B; goals (issue 17):
# median per-round IOPS within 3%, p90 within 5%, p50 and p99 latency within 10%
PAIRS=${PAIRS:-"dbio:fio_huge small:fio"}
MODE=${MODE:-rndrd}
ENGINE=${ENGINE:-uring}
case $ENGINE in
uring) QD=32 FIO_ENGINE=io_uring ;;
sync) QD=1 FIO_ENGINE=psync ;;
*) echo "ENGINE must be uring or sync" >&2; exit 2 ;;
esac
case $MODE in
rndrd) FIO_RW=randread OP=read ;;
rndwr) FIO_RW=randwrite OP=write ;;
commit)
    FIO_RW=write OP=write
    [ "$ENGINE" = sync ] || { echo "bench-fastlevel: MODE=commit needs ENGINE=sync (one record, one fdatasync at a time)" >&2; exit 2; }
    ;;
*) echo "bench-fastlevel: MODE is rndrd, rndwr or commit, not $MODE" >&2; exit 2 ;;
esac
BASE=${DIR:-/var/tmp}

log() { echo "bench-fastlevel: $*" >&2; }

need=()
command -v fio >/dev/null || need+=(fio)
command -v jq >/dev/null || need+=(jq)
if ((${#need[@]})); then
    log "installing ${need[*]}"
    if [ "$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ -z "${DBIO:-}" ]; then
    log "building dbio --release"
    (cd "$ROOT" && cargo build --release -q -p dbio)
    DBIO=$ROOT/target/release/dbio
fi

# fio_huge: fio maps its buffers with MAP_HUGETLB, from hugetlb pages reserved here
# shellcheck source=scripts/hugetlb.sh
. "$ROOT/scripts/hugetlb.sh"
if [[ " $LEGS " == *" fio_huge "* ]]; then hugetlb_reserve 8 || exit 2; fi

WORK=$(mktemp -d "$BASE/dbio-fastlevel.XXXXXX")
SET=$WORK/set
OUT=$(mktemp -d "${TMPDIR:-/tmp}/dbio-fastlevel-out.XXXXXX")
cleanup() {
    if [ -e "$SET/.dbio-fileset.json" ]; then
        "$DBIO" bench cleanup --dir "$SET" >/dev/null || log "dbio cleanup of $SET failed"
    fi
    rm -f "$WORK/fio-log"
    rmdir "$WORK" 2>/dev/null || log "left $WORK (not empty)"
    hugetlb_restore
    if [ -n "${KEEP:-}" ] && [ -s "$OUT/legs.tsv" ]; then
        mkdir -p "$KEEP" && cp "$OUT"/* "$KEEP"/ && log "raw output in $KEEP"
    fi
    rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$DBIO" bench prepare --dir "$SET" --mode rndrd --block-size 16k --file-num 4 \
    --file-total-size 1G >&2
FILES=$(printf '%s:' "$SET"/dbio-file.[0-3])
FILES=${FILES%:}

# The disk under the files, as /proc/diskstats names it (a partition's whole disk is fine too:
# the legs' reads dominate either way).
MAJMIN=$(stat -c '%d' "$SET" | awk '{printf "%d:%d", int($1 / 256) % 4096, ($1 % 256) + int($1 / 1048576) * 256}')
DEV=$(awk -v m="$MAJMIN" '{ if ($1 ":" $2 == m) print $3 }' /proc/diskstats)
# none on a memory filesystem (DIR=/dev/shm): the kernel's columns then read 0
[ -n "$DEV" ] || log "no /proc/diskstats line for device $MAJMIN under $SET: no r_await/aqu-sz"
# diskstats: requests completed and ms spent on them (reads, or writes with MODE=rndwr), and
# the weighted ms in queue
if [ "$OP" = read ]; then DONE=4 MS=7; else DONE=8 MS=11; fi
disk() { awk -v d="$DEV" -v c="$DONE" -v m="$MS" '$3 == d { print $c, $m, $14, $13; f = 1 } END { if (!f) print 0, 0, 0, 0 }' /proc/diskstats; }
now_ms() { date +%s%3N; }

# one leg: prints "IOPS P50_US P99_US"
run_leg() {
    local leg=$1 out=$OUT/leg.json
    case $leg in
    fio | fio_fixed | fio_map | fio_huge)
        local extra=(--norandommap) target=$FILES
        [ "$leg" = fio_map ] && extra=()
        [ "$leg" = fio_fixed ] && extra+=(--fixedbufs)
        [ "$leg" = fio_huge ] && extra+=(--iomem=mmaphuge)
        # commit: a log of fio's own, appended from empty by every leg as dbio's commit mode
        # appends to a new log per run (removed first, not preallocated: --fallocate=none), an
        # fdatasync after each record. Rewriting a log that exists skips the size update each
        # fdatasync of an append must journal: a different workload (issue 17).
        if [ "$MODE" = commit ]; then
            target=$WORK/fio-log
            rm -f "$target"
            # --size: the log's capacity before it wraps, as dbio's (--file-total-size 1G,
            # one thread: 1 GiB): with 256M, fio's log filled after ~3 s and fio went on
            # overwriting it (no size update to journal, faster) while dbio still appended
            # (issue 17: 4 s legs measured dbio at 0.874x fio_huge, a different workload)
            extra+=(--fdatasync=1 --size=1G --fallocate=none)
        fi
        fio --name=fastlevel --filename="$target" --rw="$FIO_RW" --bs=16k --direct=1 \
            --ioengine="$FIO_ENGINE" --iodepth="$QD" --runtime="$LEG" --time_based "${extra[@]}" \
            --output-format=json+ --output="$out" >/dev/null
        # commit: the log goes at the end of the leg, as dbio removes its own at the end of
        # its run, so no leg starts beside a log another leg left (issue 17: a leg after a fio
        # leg ran 12% slower than one after a dbio leg while fio's last log stayed behind)
        [ "$MODE" = commit ] && rm -f "$target"
        jq -r --arg op "$OP" '.jobs[0][$op].clat_ns.bins | to_entries[] | "\(.key) \(.value)"' "$out" |
            awk -v l="$leg" '{ print l, $1, $2 }' >>"$OUT/hist.tsv"
        jq -r --arg op "$OP" '.jobs[0][$op] | "\(.iops) \(.clat_ns.percentile["50.000000"] / 1000) \(.clat_ns.percentile["99.000000"] / 1000)"' "$out"
        ;;
    dbio* | *=*)
        local opts=() envs=() bin=$DBIO
        case $leg in
        dbio) ;;
        dbio_fixed) opts=(--fixed-buffers) ;;
        dbio_reg) opts=(--fixed-buffers --register-files) ;;
        *=*)
            local spec=${leg#*=} w
            for w in ${spec//,/ }; do
                if [[ $w == --* ]]; then opts+=("$w"); elif [[ $w == bin=* ]]; then bin=${w#bin=}; else envs+=("$w"); fi
            done
            ;;
        *) log "unknown leg $leg"; exit 2 ;;
        esac
        env "${envs[@]}" "$bin" bench run --dir "$SET" --mode "$MODE" --engine "$ENGINE" --iodepth "$QD" \
            --block-size 16k --file-num 4 --file-total-size 1G --threads 1 --warmup 0s \
            --time "${LEG}s" "${opts[@]}" --format json --output "$out" >/dev/null 2>"$OUT/leg.log" ||
            { cat "$OUT/leg.log" >&2; exit 1; }
        jq -r --arg op "$OP" '.summary[$op].histogram.buckets[] | "\(.[0]) \(.[1])"' "$out" |
            awk -v l="${leg%%=*}" '{ print l, $1, $2 }' >>"$OUT/hist.tsv"
        jq -r --arg op "$OP" '.summary[$op] | "\(.iops) \(.lat_ns.p50 / 1000) \(.lat_ns.p99 / 1000)"' "$out"
        ;;
    *) log "unknown leg $leg"; exit 2 ;;
    esac
}

read -r -a legs <<<"$LEGS"
n=${#legs[@]}
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$OUT/legs.tsv"
: >"$OUT/hist.tsv"
for ((r = 1; r <= ROUNDS; r++)); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    for ((i = 0; i < n; i++)); do
        leg=${legs[(i + r) % n]} # the order rotates: each leg goes first in turn
        # commit: the filesystem commits the last leg's metadata (its log's removal) first
        if [ "$MODE" = commit ]; then sync -f "$SET"; fi
        read -r rd0 rms0 wq0 busy0 <<<"$(disk)"
        t0=$(now_ms)
        res=$(run_leg "$leg")
        t1=$(now_ms)
        read -r rd1 rms1 wq1 busy1 <<<"$(disk)"
        # r_await over the leg's reads; aqu-sz over the time the disk was busy (io_ticks), so
        # a tool's longer start (the disk idle) does not lower it
        kern=$(awk -v r="$((rd1 - rd0))" -v ms="$((rms1 - rms0))" -v wq="$((wq1 - wq0))" -v t="$((busy1 - busy0))" \
            'BEGIN { printf "%.3f %.1f", r ? ms / r : 0, t ? wq / t : 0 }')
        echo "$r ${leg%%=*} $res $kern $load" >>"$OUT/legs.tsv"
        log "round $r/$ROUNDS ${leg%%=*}: $res r_await/aqu $kern load $load"
    done
done

echo
echo "dbio $("$DBIO" --version | awk '{print $2}'), $(fio --version), kernel $(uname -r), $(nproc) CPUs;" \
    "$MODE, $ROUNDS rounds x ${LEG}s legs on ${DEV:+/dev/}${DEV:-$(stat -f -c %T "$SET")}, leg order rotating;" \
    "load average $LOAD_START at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
# pooled LEG: "P50_US P99_US" over every I/O of every round of the leg (its latency histograms
# merged; a percentile is the smallest bucket value that many I/Os reach)
pooled() {
    awk -v l="$1" '$1 == l { c[$2] += $3 } END { for (v in c) print v, c[v] }' "$OUT/hist.tsv" | sort -n |
        awk '{ v[NR] = $1; c[NR] = $2; t += $2 }
            END { if (!t) { print "0 0"; exit }
                  for (i = 1; i <= NR; i++) { s += c[i]; if (!a && s >= 0.5 * t) a = v[i]; if (!b && s >= 0.99 * t) b = v[i] }
                  printf "%.1f %.1f\n", a / 1000, b / 1000 }'
}
printf '%-28s %8s %8s %8s %8s %9s %8s %8s %8s %8s %9s %7s\n' leg median p90 max "> ${FAST}" "p50 us" "p99 us" "pool p50" "pool p99" r_await aqu-sz load
for leg in "${legs[@]}"; do
    leg=${leg%%=*}
    read -r pp50 pp99 <<<"$(pooled "$leg")"
    awk -v leg="$leg" -v fast="$FAST" '$2 == leg { print $3, $4, $5, $6, $7, $8 }' "$OUT/legs.tsv" |
        sort -n | awk -v leg="$leg" -v fast="$FAST" -v pp50="$pp50" -v pp99="$pp99" '
        function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        function sorted(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
        function k(x) { return x >= 10000 ? sprintf("%.1fk", x / 1000) : sprintf("%.0f", x) }
        { n++; io[n] = $1; p50[n] = $2; p99[n] = $3; ra[n] = $4; aq[n] = $5; ld[n] = $6; if ($1 > fast) f++ }
        END {
            if (!n) exit
            p90 = io[int(0.9 * (n - 1)) + 1]
            sorted(p50, n); sorted(p99, n); sorted(ra, n); sorted(aq, n); sorted(ld, n)
            printf "%-28s %8s %8s %8s %8d %9.0f %8.0f %8.0f %8.0f %8.3f %8.1f %7.1f\n", leg, k(med(io, n)), k(p90), k(io[n]), f, med(p50, n), med(p99, n), pp50, pp99, med(ra, n), med(aq, n), med(ld, n)
        }'
done
echo "(median of rounds for p50, p99, r_await ms (w_await with MODE=rndwr), aqu-sz and the 1-minute load average at the round's start; pool: every I/O of every round)"

# like-for-like pairs: A against B, ratios of the medians over the rounds (and of the p90s)
for pair in $PAIRS; do
    a=${pair%%:*} b=${pair#*:}
    read -r pa50 pa99 <<<"$(pooled "$a")"
    read -r pb50 pb99 <<<"$(pooled "$b")"
    awk -v a="$a" -v b="$b" -v pa50="$pa50" -v pa99="$pa99" -v pb50="$pb50" -v pb99="$pb99" '
        function med(x, n) { return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 }
        function sorted(x, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && x[j - 1] > x[j]; j--) { t = x[j]; x[j] = x[j - 1]; x[j - 1] = t } }
        function within(r, g) { return (r - 1 <= g && 1 - r <= g) ? "met" : "NOT met" }
        $2 == a { na++; ia[na] = $3; pa[na] = $4; qa[na] = $5; ra[$1] = $3 }
        $2 == b { nb++; ib[nb] = $3; pb[nb] = $4; qb[nb] = $5; rb[$1] = $3 }
        END {
            if (!na || !nb) { printf "%s vs %s: no rounds for %s\n", a, b, na ? b : a; exit }
            sorted(ia, na); sorted(ib, nb); sorted(pa, na); sorted(pb, nb); sorted(qa, na); sorted(qb, nb)
            m = med(ia, na) / med(ib, nb)
            p = ia[int(0.9 * (na - 1)) + 1] / ib[int(0.9 * (nb - 1)) + 1]
            l50 = med(pa, na) / med(pb, nb); l99 = med(qa, na) / med(qb, nb)
            printf "%-22s median IOPS %.3f (within 3%%: %s), p90 IOPS %.3f (within 5%%: %s), p50 %.3f, p99 %.3f (within 10%%: %s, %s)\n",
                a " / " b, m, within(m, 0.03), p, within(p, 0.05), l50, l99, within(l50, 0.10), within(l99, 0.10)
            if (pb50 > 0 && pb99 > 0) {
                q50 = pa50 / pb50; q99 = pa99 / pb99
                printf "%-22s pooled p50 %.3f, p99 %.3f (within 10%%: %s, %s)\n", "", q50, q99, within(q50, 0.10), within(q99, 0.10)
            }
            # the same-round IOPS ratios: their median and its distribution-free 95% confidence
            # interval (order statistics k and n+1-k, k the largest with P(Bin(n, 1/2) < k) <= 2.5%)
            for (r in ra) if (r in rb && rb[r] > 0) { nr++; x[nr] = ra[r] / rb[r] }
            if (nr >= 6) {
                sorted(x, nr)
                k = 0; cum = 0; pk = 0.5 ^ nr
                for (j = 0; j < nr; j++) { cum += pk; if (cum > 0.025) break; k = j + 1; pk = pk * (nr - j) / (j + 1) }
                if (k >= 1)
                    printf "%-22s same-round IOPS ratio: median %.3f, 95%% CI %.3f-%.3f over %d rounds\n", "", med(x, nr), x[k], x[nr + 1 - k], nr
            }
        }' "$OUT/legs.tsv"
done
