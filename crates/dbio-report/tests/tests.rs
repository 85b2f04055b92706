//! The one integration-test binary of dbio-report: each file of tests/ is a module here (as
//! ripgrep's tests/tests.rs). A new test file needs a `mod` line below; its insta snapshots
//! are named tests__<file>__<name>.snap.

mod bench_export;
mod export_align;
mod export_check;
mod export_innodb;
mod export_iostat;
mod export_model;
mod export_report;
mod export_sweep_stack;
mod mysql_chunk_export;
