#!/usr/bin/env bash
# Runs every dbio test: formatting, lints, unit and integration tests (real files, real
# io_uring, real disk images, real MariaDB tablespaces). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-test-env.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# Tests marked #[ignore = "needs ..."] (a machine fact such as the root disk) run too: a
# missing prerequisite fails here instead of passing unseen.
DBIO_TESTS_REQUIRE_ALL=1 cargo test --workspace -- --include-ignored
# Fuzz smoke: every parser of outside input for a few seconds from its seed corpus; exits
# non-zero on any crash (scripts/fuzz.sh installs cargo-fuzz when missing; measured at about
# 4 minutes from a machine without cargo-fuzz, see the README's fuzzing section).
scripts/fuzz.sh "${DBIO_FUZZ_SECONDS:-3}"
