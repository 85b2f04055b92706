//! JSON Lines for streams: one compact document per line, each with `schema` and
//! `dbio_version` first, one file per result.

pub mod iostat;
