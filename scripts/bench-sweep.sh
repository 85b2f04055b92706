#!/usr/bin/env bash
# The cost of a sweep beyond its points' own run time: the time between two points (opening the
# files, the clock calibration, starting threads, writing the point's result and sweep.json).
# Goal (issue 12): under 0.5 s per point. Usage: scripts/bench-sweep.sh [POINTS] [TIME]
set -euo pipefail
cd "$(dirname "$0")/.."
points=${1:-20}
time=${2:-200ms}
cargo build --release -q -p dbio
bin=target/release/dbio
threads=$(seq -s, 1 "$points")
work=$(mktemp -d /dev/shm/dbio-bench-sweep.XXXXXX)
trap 'rm -rf "$work"' EXIT
for engine in null sync uring; do
    start=$(date +%s.%N)
    "$bin" sweep --engine "$engine" --dir "$work/set" --file-num 4 --file-total-size 64M \
        --mode rndrd --block-size 4k --threads "$threads" --time "$time" \
        --output-dir "$work/out-$engine" --format json >"$work/$engine.json" 2>/dev/null
    end=$(date +%s.%N)
    python3 - "$work" "$engine" "$start" "$end" <<'PY'
import json, sys
work, engine, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
s = json.load(open(f"{work}/{engine}.json"))
run = sum(json.load(open(f"{work}/out-{engine}/{p['file']}"))["summary"]["total_s"] for p in s["points"])
n = len(s["points"])
wall = end - start
print(f"{engine:5}  {n} points  wall {wall:.2f}s  runs {run:.2f}s  between points {(wall - run) / n * 1000:.0f} ms/point (prepare included)")
PY
done
