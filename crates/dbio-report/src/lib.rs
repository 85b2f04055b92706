//! The exporters of every dbio command's result (text, JSON, CSV, Prometheus, Nagios,
//! sysbench, HTML with charts) and the analysis of `dbio report` (knee, stalls, steady state,
//! A/B). The result types themselves live below, in dbio-schema; this crate sits above them and
//! is used by the binary only. It never prints and never exits: it returns bytes and typed
//! errors.
#![deny(missing_docs)]

pub mod analysis;
pub mod export;

pub use export::{Exporter, Exporters, Format, Render};
