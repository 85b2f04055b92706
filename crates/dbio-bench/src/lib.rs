//! dbio's workload engine: a [`Spec`](dbio_schema::bench::Spec) is prepared (a file set of
//! incompressible data), run (one worker thread per `--threads`, each with its own engine,
//! buffers, RNG and histograms) and cleaned up (only files dbio created). Never prints.
#![deny(missing_docs)]

pub mod devmon;
pub mod dist;
pub mod engines;
pub mod env;
pub mod environment;
pub mod error;
pub mod fileset;
pub mod oltp;
pub mod options;
pub mod plan;
pub mod result;
pub mod rng;
pub mod run;
pub mod server_layout;
pub mod spec;
pub mod sweep;
pub mod timer;
pub mod verdict;
pub mod warn;
pub mod worker;

pub use error::BenchError;
