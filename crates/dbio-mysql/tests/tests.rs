//! The one integration-test binary of dbio-mysql: each file of tests/ is a module here (as
//! ripgrep's tests/tests.rs). A new test file needs a `mod` line below.

mod conn;
mod live;
