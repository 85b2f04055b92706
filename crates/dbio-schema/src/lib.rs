//! What every dbio command returns: the result types (one module per command), the units they
//! are written in (sizes, durations, rates), the latency histograms and the schema documents
//! that wrap them. Small and below everything else: the domain crates (bench, innodb, storage,
//! mysql, model, sys) build these types, and the exporters in dbio-report render them. No
//! charts, no output formats, no I/O except reading a result document back ([`read`]).
#![deny(missing_docs)]

pub mod advise;
pub mod align;
pub mod bench;
pub mod check;
pub mod disk;
pub mod doc;
pub mod hist;
pub mod innodb;
pub mod iostat;
pub mod model;
pub mod mysql_chunk;
pub mod read;
pub mod report;
pub mod rows;
pub mod stack;
pub mod stalk;
pub mod sweep;
pub mod units;

pub use doc::Document;
pub use hist::LatencyHistogram;
