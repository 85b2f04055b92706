//! JSON Lines for streams: one compact document per line, one file per result.

pub mod innodb;
pub mod iostat;
