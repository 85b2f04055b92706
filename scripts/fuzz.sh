#!/usr/bin/env bash
# Fuzzes every parser that reads outside input (the cargo-fuzz targets in fuzz/), one target
# after the other, each for SECONDS (default 60), starting from the seed corpus that
# scripts/fuzz-seeds.sh builds from testdata/. Prints, per target, the executions run and
# whether it crashed; exits 1 when any target crashed (the input is in
# fuzz/artifacts/TARGET/, the log in fuzz/logs/TARGET.log).
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
# Needs the nightly toolchain and cargo-fuzz; installs them when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
case "$secs" in
'' | *[!0-9]* | 0)
  # (libFuzzer reads -max_total_time=0 as "run for ever")
  echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]: SECONDS must be a whole number of at least 1, got '$secs'" >&2
  exit 2
  ;;
esac

if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

all=$(cargo +nightly fuzz list --fuzz-dir fuzz)
if [ $# -gt 0 ]; then
  targets="$*"
  for t in $targets; do
    if ! grep -qx "$t" <<<"$all"; then
      echo "scripts/fuzz.sh: no fuzz target '$t'; the targets are: $(echo $all)" >&2
      exit 2
    fi
  done
else
  targets=$all
fi

for t in $targets; do
  if [ -z "$(ls -A fuzz/corpus/$t 2>/dev/null)" ]; then
    # The tools the seeds are made with (mkfs, pvcreate, sfdisk) talk on stderr: keep that in
    # a log, print only fuzz-seeds' own notes (a tool missing), and the whole log on a failure.
    mkdir -p fuzz/logs
    if ! scripts/fuzz-seeds.sh >fuzz/logs/seeds.log 2>&1; then
      cat fuzz/logs/seeds.log >&2
      echo "scripts/fuzz.sh: making the seed corpora failed (log above, fuzz/logs/seeds.log)" >&2
      exit 1
    fi
    grep '^fuzz-seeds:' fuzz/logs/seeds.log >&2 || true
    break
  fi
done

cargo +nightly fuzz build --fuzz-dir fuzz
# The targets are run directly: `cargo fuzz run` would check the build again for each one.
host=$(rustc +nightly -vV | sed -n 's/^host: //p')
bin=fuzz/target/$host/release

mkdir -p fuzz/logs
crashed=0
results=()
for t in $targets; do
  log=fuzz/logs/$t.log
  mkdir -p fuzz/corpus/$t fuzz/artifacts/$t
  # -timeout: one input taking over 10 s is a hang; -rss_limit_mb: over 2 GiB is a crash.
  set +e
  "$bin/$t" "fuzz/corpus/$t" \
    -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -dict=fuzz/numbers.dict -artifact_prefix="fuzz/artifacts/$t/" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ -z "$execs" ]; then
    # A crash ends the run before the final stats: take the last status line (#N ...).
    execs=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$log" | tail -1)
  fi
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ $rc -eq 0 ]; then
    verdict="no crash"
  else
    crashed=1
    what=$(grep -m1 -oE 'ERROR: libFuzzer: [a-z-]+|panicked at [^:]+:[0-9]+' "$log" || true)
    art=$(grep -m1 -oE 'Test unit written to [^ ]+' "$log" | sed 's/Test unit written to //' || true)
    verdict="CRASH (exit $rc${what:+: $what}${art:+; input $art}; log $log)"
  fi
  # One table, printed once at the end.
  results+=("$(printf '%-20s %12s executions %8s/s  %s' "$t" "${execs:-?}" "${rate:-?}" "$verdict")")
done

echo
echo "fuzz summary: ${secs} s per target"
printf '%s\n' "${results[@]}"
exit $crashed
