//! `innodb rows`: recovered InnoDB pages decoded back into rows, given a table definition.
//!
//! [`def`] reads the definition from a CREATE TABLE statement, [`dict_def`] from the InnoDB
//! data dictionary (dropped tables too), [`value`] turns stored bytes into values as the
//! server prints them, [`record`] splits clustered-index leaf records (COMPACT/DYNAMIC and
//! REDUNDANT) into fields and checks them, [`run`] finds the index and
//! keeps the newest version of each key, [`write`] prints SQL, TSV or JSON Lines, [`zip`]
//! decompresses ROW_FORMAT=COMPRESSED pages and BLOBs.

pub mod def;
pub mod dict_def;
pub mod inflate;
pub mod instant;
pub mod record;
pub mod run;
pub mod temporal;
pub mod value;
pub mod write;
pub mod zip;
