#!/usr/bin/env bash
# Runs every dbio test: formatting, lints, unit and integration tests (real files, real
# io_uring, real disk images, real MariaDB tablespaces). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-test-env.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# No file imports one that imports it back (docs/architecture.md): the crate graph stays a tree
# of layers down to the file.
python3 scripts/import-cycles.py crates/*/src
# The fuzz targets are their own workspace (nightly for the sanitizer build): check that they
# still compile against the library crates before the long test run, so an API change that
# breaks them fails here in seconds, not after every test.
cargo check --quiet --manifest-path fuzz/Cargo.toml --bins
# Unit, integration (one tests/tests.rs binary per crate) and doc tests. Tests marked
# #[ignore = "needs ..."] (root, a loop device, a tool, a fact of the machine such as the root
# disk) run too: each asserts its prerequisite, so a missing one fails here instead of passing
# unseen.
cargo test --workspace --no-fail-fast -- --include-ignored
# Fuzz smoke: every parser of outside input for a few seconds from its seed corpus; exits
# non-zero on any crash (scripts/fuzz.sh installs cargo-fuzz when missing; measured at about
# 4 minutes from a machine without cargo-fuzz, see docs/development.md).
scripts/fuzz.sh "${DBIO_FUZZ_SECONDS:-3}"
