#!/usr/bin/env bash
# Runs every dbio test: formatting, lints, unit and integration tests (real files, real
# io_uring, real disk images, real MariaDB tablespaces). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-test-env.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
DBIO_TESTS_REQUIRE_ALL=1 cargo test --workspace
