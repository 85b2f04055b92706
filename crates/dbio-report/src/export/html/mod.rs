//! HTML output: one self-contained page per result.

mod charts;
pub mod model;
pub mod report;
pub mod stalk;
