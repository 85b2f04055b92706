//! `innodb rows`: recovered InnoDB pages decoded back into rows, given a table definition.
//!
//! [`def`] reads the definition from a CREATE TABLE statement, [`dict_def`] from the InnoDB
//! data dictionary (dropped tables too), [`value`] turns stored bytes into values as the
//! server prints them, [`record`] splits clustered-index leaf records (COMPACT/DYNAMIC and
//! REDUNDANT) into fields and checks them, [`store`] indexes the pages found, [`run`] finds
//! the index and keeps the newest version of each key (over [`walk`]), handing rows to a
//! [`sink`]; [`line`] formats them as SQL, TSV or JSON Lines and [`write`] writes them;
//! [`zip`] decompresses ROW_FORMAT=COMPRESSED pages and BLOBs, [`lob`] reads MySQL 8 LOBs. [`job`] is the whole command
//! in one call: a [`job::Request`] in, the rows written and a summary out.
//!
//! Imports go one way (a module never imports one that imports it back): `def` <- `value` <-
//! `record` <- `instant`, `row_version`, `store` <- `layout`, `walk` <- `diagnose` <- `run` <- `job`; `line`
//! <- `sink` <- `write`. [`sdi_def`] (the definition from a MySQL 8 SDI, read by
//! [`crate::sdi`]) <- `def`, `dict_def`, `row_version`; `job` <- `sdi_def`.

pub mod def;
pub mod dict_def;
pub mod frm;

pub mod inflate;
pub mod inputs;
pub mod instant;
pub mod job;

pub mod line;
pub mod lob;
pub mod record;
pub mod row_version;
pub mod run;
pub mod sdi_def;
pub mod sink;
pub mod store;
pub mod temporal;
pub mod value;

pub mod write;
pub mod zip;

mod diagnose;
mod error;
mod layout;
mod walk;
