#!/usr/bin/env bash
# How fast `dbio report` is on a big input: 50 bench runs of 600 intervals each (real runs of
# the null engine, threads 1-16 x iodepth 1/4, 5 repeats each, so the report has points,
# curves, merges and comparisons to compute), rendered to HTML, JSON, text and CSV.
# Goal (issue 12): under 1 s, and the HTML under 3 MB. A measurement, not a test: it prints
# the figures and whether each goal was met, and exits non-zero only when it could not measure.
#
#   scripts/bench-report.sh [DIR]     DIR keeps the generated runs (default: a temporary one;
#                                     given, runs already there are reused)
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release -p dbio >&2
bin=$PWD/target/release/dbio
dir=${1:-$(mktemp -d)}
mkdir -p "$dir/runs"
data=$(mktemp -d /dev/shm/dbio-bench-report.XXXXXX)
trap 'rm -rf "$data"' EXIT

n=0
for rep in 1 2 3 4 5; do
  for threads in 1 2 4 8 16; do
    for qd in 1 4; do
      n=$((n + 1))
      out=$dir/runs/t${threads}-qd${qd}-r${rep}.json
      [ -s "$out" ] && continue
      # 600 intervals of 5 ms: --time 3s (the last may be cut short by the drain).
      "$bin" bench --engine null --mode rndrd --dir "$data" --file-num 1 --file-total-size 1M \
        --threads "$threads" --iodepth "$qd" --time 3s --report-interval 5ms \
        --format json -o "$out" 2>/dev/null
    done
  done
done
files=("$dir"/runs/*.json)
intervals=$(for f in "${files[@]}"; do grep -c '"start_s"' "$f"; done | awk '{s+=$1} END {print s}')
input_bytes=$(cat "${files[@]}" | wc -c)
echo "input: ${#files[@]} runs, $intervals intervals, $((input_bytes / 1048576)) MiB of JSON in $dir/runs"

# Wall time of one command in ms (best of 3: the machine may be shared).
best_ms() {
  local best=
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null
    t1=$(date +%s%N)
    local ms=$(((t1 - t0) / 1000000))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  echo "$best"
}

for fmt in html json text csv; do
  out=$dir/report.$fmt
  ms=$(best_ms "$bin" report --format "$fmt" -o "$out" "${files[@]}")
  size=$(stat -c %s "$out")
  line="report --format $fmt: ${ms} ms (best of 3), $((size / 1024)) KiB"
  if [ "$ms" -ge 1000 ]; then line+="  [over the 1 s goal]"; fi
  if [ "$fmt" = html ] && [ "$size" -ge $((3 * 1024 * 1024)) ]; then line+="  [over the 3 MB goal]"; fi
  echo "$line"
done
echo "cpus: $(nproc), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
