//! Result schemas, unit parsing/printing, latency histograms and exporters shared by every
//! dbio command. This crate never prints and never exits: it returns bytes and typed errors.
#![deny(missing_docs)]

pub mod align;
pub mod analysis;
pub mod bench;
pub mod check;
pub mod disk;
pub mod doc;
pub mod export;
pub mod hist;
pub mod innodb;
pub mod model;
pub mod mysql_chunk;
pub mod read;
pub mod report;
pub mod sweep;
pub mod units;

pub use doc::Document;
pub use export::{Exporter, JsonExporter};
pub use hist::LatencyHistogram;
