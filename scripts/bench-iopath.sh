#!/usr/bin/env bash
# Where does each I/O's time go, fio against dbio, one I/O at a time? (issue 17)
#
# Sync QD 1, 16 KiB O_DIRECT random reads (MODE=rndrd) or writes (MODE=rndwr) over one file set
# of 4 x 256 MiB made by `dbio bench prepare`, interleaved legs of fio --ioengine=psync
# --iomem=mmaphuge --norandommap and dbio --engine sync (both with their buffers in a huge page),
# each leg traced with bpftrace at the kernel's tracepoints. For the worker thread of each tool it
# splits the average I/O into:
#   user     from the return of one pread/pwrite to the call of the next (the tool's own code)
#   submit   from the call to the request's issue to the driver (block:block_rq_issue)
#   device   from the issue to its completion in the guest (block:block_rq_complete): the time
#            the device, here the hypervisor and its disk, holds the request, with the interrupt
#   wakeup   from the completion to the wake-up of the worker (sched:sched_wakeup)
#   run      from the wake-up to the worker running again (sched:sched_switch)
#   return   from running again to the return of the system call
#   syscall  the whole pread/pwrite; per-I/O total = user + syscall
# and prints, per tool, the median over legs of each part and the leg's IOPS (traced: tracing
# costs a few us per I/O, alike for both tools). The tool-side parts (user, submit, return)
# against the device's part say whether a gap between two tools is theirs or the device's.
#
#   scripts/bench-iopath.sh                     # 8 rounds of reads
#   ROUNDS=12 MODE=rndwr scripts/bench-iopath.sh
#   LEGS="dbio dbio_b" scripts/bench-iopath.sh  # the control: the same dbio twice per round
#
# Environment: LEGS (two of fio_huge, dbio, dbio_b; default "fio_huge dbio"; dbio_b is dbio again,
# to show how far two legs of the same tool differ), ROUNDS (8), LEG seconds (2), MODE (rndrd,
# rndwr), DIR (scratch directory on the disk, default /var/tmp; the file set is made there and
# removed at exit), DBIO (the binary; default: build target/release/dbio). Needs root
# (bpftrace, hugetlb pages for fio).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-8}
read -r -a legs <<<"${LEGS:-fio_huge dbio}"
for l in "${legs[@]}"; do
    case $l in fio_huge | dbio | dbio_b) ;; *) echo "bench-iopath: unknown leg '$l' (fio_huge, dbio, dbio_b)" >&2; exit 2 ;; esac
done
[ ${#legs[@]} -eq 2 ] && [ "${legs[0]}" != "${legs[1]}" ] ||
    { echo "bench-iopath: LEGS names two different legs, not '${legs[*]}'" >&2; exit 2; }
A=${legs[0]} B=${legs[1]}
LEG=${LEG:-2}
MODE=${MODE:-rndrd}
case $MODE in
rndrd) FIO_RW=randread OP=read ;;
rndwr) FIO_RW=randwrite OP=write ;;
*) echo "bench-iopath: MODE is rndrd or rndwr, not '$MODE'" >&2; exit 2 ;;
esac
log() { echo "bench-iopath: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { log "needs root (bpftrace attaches to kernel tracepoints)"; exit 2; }

need=()
for t in fio jq bpftrace; do command -v $t >/dev/null || need+=("$t"); done
if ((${#need[@]})); then
    log "installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
# bpftrace finds tracepoints under tracefs; a container or a minimal VM may not have it mounted
if [ ! -d /sys/kernel/tracing/events/block ]; then
    mount -t tracefs nodev /sys/kernel/tracing ||
        { log "tracefs is not mounted at /sys/kernel/tracing and could not be: mount it and rerun"; exit 2; }
fi
if [ -z "${DBIO:-}" ]; then
    (cd "$ROOT" && cargo build --release -q -p dbio)
    DBIO=$ROOT/target/release/dbio
fi
# shellcheck source=scripts/hugetlb.sh
. "$ROOT/scripts/hugetlb.sh"

WORK=$(mktemp -d "${DIR:-/var/tmp}/dbio-iopath.XXXXXX")
OUT=$(mktemp -d "${TMPDIR:-/tmp}/dbio-iopath-out.XXXXXX")
SET=$WORK/set
cleanup() {
    if [ -n "${BT_PID:-}" ]; then kill "$BT_PID" 2>/dev/null || true; fi
    if [ -e "$SET/.dbio-fileset.json" ]; then
        "$DBIO" bench cleanup --dir "$SET" >/dev/null || log "dbio cleanup of $SET failed"
    fi
    rmdir "$WORK" 2>/dev/null || log "left $WORK (not empty)"
    hugetlb_restore
    rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
hugetlb_reserve 8 || exit 2

"$DBIO" bench prepare --dir "$SET" --mode rndrd --block-size 16k --file-num 4 \
    --file-total-size 1G >&2
FILES=$(printf '%s:' "$SET"/dbio-file.[0-3])
FILES=${FILES%:}

# syscall numbers of pread64 and pwrite64 on this machine's architecture
case $(uname -m) in
x86_64) NR_READ=17 NR_WRITE=18 ;;
aarch64) NR_READ=67 NR_WRITE=68 ;;
*) log "no pread64/pwrite64 syscall numbers for $(uname -m)"; exit 2 ;;
esac
cat >"$OUT/iopath.bt" <<EOF
tracepoint:raw_syscalls:sys_enter
/(comm == "fio" || comm == "dbio-worker-0") && (args->id == $NR_READ || args->id == $NR_WRITE)/
{
    @enter[tid] = nsecs; @worker = tid;
    if (@exit[tid]) { @user = avg(nsecs - @exit[tid]); }
}
tracepoint:block:block_rq_issue
/@enter[tid]/
{
    @issued[args->sector] = nsecs;
    @submit = avg(nsecs - @enter[tid]);
}
tracepoint:block:block_rq_complete
/@issued[args->sector]/
{
    @device = avg(nsecs - @issued[args->sector]);
    @completed = nsecs;
    delete(@issued[args->sector]);
}
tracepoint:sched:sched_wakeup
/args->pid == @worker && @completed/
{
    @wakeup = avg(nsecs - @completed);
    @woken = nsecs; @completed = 0;
}
tracepoint:sched:sched_switch
/args->next_pid == @worker && @woken/
{
    @run = avg(nsecs - @woken);
    @ran = nsecs; @woken = 0;
}
tracepoint:raw_syscalls:sys_exit
/@enter[tid] && (args->id == $NR_READ || args->id == $NR_WRITE)/
{
    if (@ran) { @return = avg(nsecs - @ran); @ran = 0; }
    @syscall = avg(nsecs - @enter[tid]);
    @exit[tid] = nsecs;
    delete(@enter[tid]);
}
END { clear(@enter); clear(@exit); clear(@issued); clear(@worker); clear(@completed); clear(@woken); clear(@ran); }
EOF

PARTS="user submit device wakeup run return syscall"
# one traced leg: prints "IOPS user submit device wakeup run return syscall" (ns)
run_leg() {
    local leg=$1 bt=$OUT/bt.txt
    bpftrace "$OUT/iopath.bt" >"$bt" 2>"$OUT/bt.err" &
    BT_PID=$!
    # the probes are attached once bpftrace says so
    for _ in $(seq 100); do
        grep -q '^Attaching' "$bt" && break
        kill -0 "$BT_PID" 2>/dev/null || { cat "$OUT/bt.err" >&2; log "bpftrace failed"; exit 1; }
        sleep 0.1
    done
    local iops
    if [ "$leg" = fio_huge ]; then
        fio --name=iopath --filename="$FILES" --rw="$FIO_RW" --bs=16k --direct=1 --ioengine=psync \
            --iodepth=1 --runtime="$LEG" --time_based --norandommap --iomem=mmaphuge \
            --output-format=json --output="$OUT/leg.json" >/dev/null
        iops=$(jq -r --arg op "$OP" '.jobs[0][$op].iops' "$OUT/leg.json")
    else
        "$DBIO" bench run --dir "$SET" --mode "$MODE" --engine sync --iodepth 1 --block-size 16k \
            --file-num 4 --file-total-size 1G --threads 1 --warmup 0s --time "${LEG}s" \
            --format json --output "$OUT/leg.json" >/dev/null 2>"$OUT/leg.log" ||
            { cat "$OUT/leg.log" >&2; exit 1; }
        iops=$(jq -r --arg op "$OP" '.summary[$op].iops' "$OUT/leg.json")
    fi
    kill -INT "$BT_PID"
    wait "$BT_PID" || true
    BT_PID=
    local line=$iops p v
    for p in $PARTS; do
        v=$(awk -v k="@$p:" '$1 == k { print $2 }' "$bt")
        [ -n "$v" ] || { cat "$bt" "$OUT/bt.err" >&2; log "no '$p' figure in bpftrace's output"; exit 1; }
        line+=" $v"
    done
    echo "$line"
}

: >"$OUT/legs.tsv"
for ((r = 1; r <= ROUNDS; r++)); do
    for i in 0 1; do
        leg=${legs[(i + r) % 2]}
        res=$(run_leg "$leg")
        echo "$r $leg $res" >>"$OUT/legs.tsv"
        log "round $r/$ROUNDS $leg: $res"
    done
done

echo "dbio $("$DBIO" --version | awk '{print $2}'), $(fio --version), kernel $(uname -r), $(nproc) CPUs;" \
    "sync QD1 $MODE, $ROUNDS rounds x ${LEG}s legs, traced; median over legs, us per I/O"
# per leg and column the median over its legs, then A, B and B against A (IOPS as a ratio, the
# parts as a difference in us)
awk -v a="$A" -v b="$B" -v parts="iops $PARTS" '
    function med(x, n,   i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && x[j - 1] > x[j]; j--) { t = x[j]; x[j] = x[j - 1]; x[j - 1] = t }
        return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
    }
    $2 == a { na++; for (c = 3; c <= NF; c++) va[c, na] = $c }
    $2 == b { nb++; for (c = 3; c <= NF; c++) vb[c, nb] = $c }
    END {
        printf "%-10s %10s %10s %14s\n", "part", a, b, b "-" a
        np = split(parts, name, " ")
        for (k = 1; k <= np; k++) {
            c = k + 2
            delete x; for (i = 1; i <= na; i++) x[i] = va[c, i]; ma = med(x, na)
            delete x; for (i = 1; i <= nb; i++) x[i] = vb[c, i]; mb = med(x, nb)
            if (name[k] == "iops") printf "%-10s %10.0f %10.0f %13.3fx\n", "IOPS", ma, mb, mb / ma
            else printf "%-10s %10.2f %10.2f %+14.2f\n", name[k], ma / 1000, mb / 1000, (mb - ma) / 1000
        }
    }' "$OUT/legs.tsv"
