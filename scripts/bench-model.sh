#!/usr/bin/env bash
# Timings of dbio's model math (issue 13's performance goals): a USL fit over 100 points in
# under 10 ms, exact MVA to N = 10,000 with 10 centres in under 100 ms. A measurement, not a
# test: a loaded machine makes it slower, so read it next to the machine's load.
#
#   scripts/bench-model.sh        # 20 repetitions of each
#   scripts/bench-model.sh 100    # more repetitions
set -euo pipefail
cd "$(dirname "$0")/.."
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
cargo run --quiet --release -p dbio --example model_perf -- "${1:-20}"
