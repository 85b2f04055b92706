//! The one integration-test binary of dbio-innodb: each file of tests/ is a module here (as
//! ripgrep's tests/tests.rs). A new test file needs a `mod` line below; its insta snapshots
//! are named tests__<file>__<name>.snap.

mod crypt;
mod dict_rows;
mod fuzz_regressions;
mod rows;
mod rows_formats;
mod rows_pages;
mod rows_zip;
mod sdi;
