//! The one integration-test binary of dbio: each file of tests/ is a module here (as
//! ripgrep's tests/tests.rs). A new test file needs a `mod` line below; its insta snapshots
//! are named tests__<file>__<name>.snap.

mod common;

mod align;
mod bench;
mod bench_formats;
mod check;
mod files;
mod innodb;
mod innodb_crypt;
mod innodb_dict;
mod innodb_frm;
mod innodb_pages_full;
mod innodb_rows;
mod innodb_rows_blobs;
mod innodb_rows_fit;
mod innodb_rows_purge;
mod innodb_sdi;
mod iostat;
mod json_schema;
mod model;
mod mysql_advise;
mod mysql_chunk;
mod mysql_frozen;
mod mysql_replica;
mod mysql_stalk;
mod mysql_tls;
mod packaging;
mod readme;
mod report;
mod stack;
mod sweep;
mod write_safety;
